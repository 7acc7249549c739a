// STUB: to be written.
import type { Module } from '../../engine/module.js';

export const sessionModule: Module = {
  name: 'session',
  register() {},
};
