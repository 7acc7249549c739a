// Walking an OpenAPI document in tests.
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

export interface DocumentedOperation {
  path: string;
  method: string;
  op: Record<string, any>;
}

/** Every operation of the document, with its path and method. */
export function operationsOf(doc: Record<string, any>): DocumentedOperation[] {
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item).filter(([m]) => METHODS.includes(m)).map(([method, op]) => ({ path, method, op })),
  );
}
