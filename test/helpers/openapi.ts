// Walking an OpenAPI document in tests.
import { ALIASES_EXTENSION } from '../../engine/openapi/fragments.js';

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

/** Every alias path of the document (listed in a path item's x-aliases), with the path item it answers as. */
export function aliasesOf(doc: Record<string, any>): Array<{ alias: string; path: string }> {
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    ((item[ALIASES_EXTENSION] as string[] | undefined) ?? []).map((alias) => ({ alias, path })),
  );
}

/**
 * Every operation as the server answers it: under its path and under each alias of it (`path`
 * the one sent, `documentedAt` the path item that declares it).
 */
export function servedOperationsOf(doc: Record<string, any>): Array<DocumentedOperation & { documentedAt: string }> {
  const operations = operationsOf(doc);
  return [
    ...operations.map((o) => ({ ...o, documentedAt: o.path })),
    ...aliasesOf(doc).flatMap(({ alias, path }) => operations.filter((o) => o.path === path).map((o) => ({ ...o, path: alias, documentedAt: path }))),
  ];
}
