// `express4` is an npm alias of express@4 used to check that the middleware works on Express 4.
// Its runtime API is the part of Express 5's types these tests use.
declare module 'express4' {
  import express from 'express';
  export default express;
}
