#!/usr/bin/env node
console.log('latch-testing: not implemented yet');
