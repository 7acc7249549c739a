// Hand-written modules: resources whose routes are not plain CRUD. Each lives in its own folder.
import type { Module } from '../engine/module.js';
import { employeeStatisticsModule } from './employee-statistics/index.js';
import { eventTypeModule } from './event-type/index.js';
import { exportImportModule } from './export-import/index.js';
import { imageUploadModule } from './image-upload/index.js';
import { publicShareModule } from './public-share/index.js';
import { reportModule } from './report/index.js';
import { tagByNameModule } from './tag-by-name/index.js';

export const modules: Module[] = [eventTypeModule, tagByNameModule, employeeStatisticsModule, reportModule, imageUploadModule, exportImportModule, publicShareModule];
