// STUB: to be written.
import type { Module } from '../../engine/module.js';

export const passwordModule: Module = {
  name: 'password',
  register() {},
};
