// Hand-written modules: resources whose routes are not plain CRUD. Each lives in its own folder.
import type { Module } from '../engine/module.js';

export const modules: Module[] = [];
