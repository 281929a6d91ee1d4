import { memoryStore } from '../../src/stores/memory-store.js';
import { describeStoreContract } from './store-contract.js';

describeStoreContract(
  'memory',
  async () => {
    const store = memoryStore();
    return {
      store,
      maxKey: { length: 4096, unit: 'utf16-units' },
      async tamper(key, rawText) {
        store.documents.set(key, { version: `tampered-${key}`, text: rawText });
      },
    };
  },
  { claim: typeof memoryStore().claim === 'function' },
);
