// openapi-fetch's methods infer the whole request (params, body) from the argument, and so
// accept a body with a property the document does not have, as long as the ones it needs are
// there. These signatures take the request's type from the path alone: an object literal with
// an unknown property, in a body or a query, is then a compile error like any other mismatch.
import type { Client, ClientPathsWithMethod, FetchResponse, MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from './schema.js';

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch' | 'head' | 'options';

/** The request options of `method` on `path`: params, body, and openapi-fetch's per-call options. */
export type RequestOf<Path extends keyof paths, M extends Method> = MaybeOptionalInit<paths[Path], M & keyof paths[Path]>;

/** The second argument, required when the operation has a required parameter or body. */
type InitArgument<Path extends keyof paths, M extends Method> = [undefined] extends [RequestOf<Path, M>] ? [init?: RequestOf<Path, M>] : [init: RequestOf<Path, M>];

type StrictMethod<M extends Method> = <Path extends ClientPathsWithMethod<Client<paths>, M>>(
  path: Path,
  ...init: InitArgument<Path, M>
) => Promise<FetchResponse<paths[Path][M & keyof paths[Path]] & Record<string | number, any>, RequestOf<Path, M>, `${string}/${string}`>>;

export interface StrictClient {
  GET: StrictMethod<'get'>;
  PUT: StrictMethod<'put'>;
  POST: StrictMethod<'post'>;
  DELETE: StrictMethod<'delete'>;
  PATCH: StrictMethod<'patch'>;
  HEAD: StrictMethod<'head'>;
  OPTIONS: StrictMethod<'options'>;
}
