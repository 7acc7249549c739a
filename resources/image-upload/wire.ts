// What a client sees of the image routes besides their paths: the upload form's field names and
// how long a served file may be cached. Shared by the handlers and their documentation.
export const FILE_FIELD = 'file';
export const NAME_FIELD = 'name';
/** How long a browser may keep a file: a file never changes under its id, but access can end. */
export const CACHE_SECONDS = 3600;
