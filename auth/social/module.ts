// STUB: to be written.
import type { Module } from '../../engine/module.js';

export const socialModule: Module = {
  name: 'social',
  register() {},
};
