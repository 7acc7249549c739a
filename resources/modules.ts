// Hand-written modules: resources whose routes are not plain CRUD. Each lives in its own folder.
import type { Module } from '../engine/module.js';
import { eventTypeModule } from './event-type/index.js';
import { tagByNameModule } from './tag-by-name/index.js';

export const modules: Module[] = [eventTypeModule, tagByNameModule];
