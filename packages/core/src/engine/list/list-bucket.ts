/** The plain object requests the list strategy needs: no conditional headers anywhere. */
export interface ListBucket {
  /** Throws LockConfigError when objects of lock `name` would get keys the store refuses. */
  checkName(name: string): void;
  put(objectKey: string, body: string): Promise<void>;
  /** Every object key that starts with `prefix`, all pages. */
  list(prefix: string): Promise<string[]>;
  /** The object's body, or null when it is gone. */
  get(objectKey: string): Promise<string | null>;
  /** Deletes the object; deleting a missing object is not an error. */
  delete(objectKey: string): Promise<void>;
}
