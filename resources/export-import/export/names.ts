// What the export handlers and their documentation both name: the path and the permission.
export const EXPORT_PATH = '/api/export';
export const EXPORT_PERMISSION = 'EXPORT_ADD';
