// What the import handler and its documentation both name: the path and the permission.
export const IMPORT_PERMISSION = 'IMPORT_ADD';
/** Under it, /<name> of each importable resource (or an alias), and the template for any other name. */
export const IMPORT_PATH = '/api/import';
