// What the import handler and its documentation both name: the path and the permission.
export const IMPORT_PERMISSION = 'IMPORT_ADD';
export const IMPORT_PATH = '/api/import/:resource';
