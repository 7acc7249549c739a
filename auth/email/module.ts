// STUB: to be written.
import type { Module } from '../../engine/module.js';

export const emailModule: Module = {
  name: 'email',
  register() {},
};
