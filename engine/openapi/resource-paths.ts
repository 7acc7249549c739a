// The paths of the generated CRUD routes (engine/resource/routes.ts) under a resource's path: the
// seven operations, their parameters, bodies and errors. Its aliases' routes are documented as
// these (the document lists them in `x-aliases`), not as operations of their own.
import { ANY_AUTHENTICATED } from '../caller.js';
import type { OpenApiPaths } from '../module.js';
import type { CompiledResource, Operation } from '../resource/compiled.js';
import { COUNT_PATH, PAGINATION_PATH, TOTAL_EXACT_HEADER } from '../resource/route-names.js';
import {
  answeredRecord,
  article,
  errorResponses,
  idParameter,
  jsonBody,
  jsonResponse,
  listParameters,
  organizationHeaderParameters,
  pascalCase,
  ref,
  relationsParameter,
  schemaName,
  preferParameter,
  searchBody,
  selectParameter,
} from './fragments.js';
import { etagHeader, ifMatchParameter, ifNoneMatchParameter, notModifiedResponse } from './conditional-fragments.js';
import { softDeletePaths, withDeletedParameters } from './soft-delete-fragments.js';


export function permissionNote(resource: CompiledResource, operation: Operation): string {
  const permission = resource.permissions[operation];
  const who = permission === ANY_AUTHENTICATED ? 'Any signed-in user of the tenant.' : `Needs the ${permission} permission.`;
  const rule = resource.ownerRule;
  const owner = resource.owner && rule ? ` The ${rule.role} role reaches only records whose ${resource.owner} is ${rule.ownerIs}.` : '';
  return who + owner;
}


/** Operation ids' verbs, which a module may annotate with a sentence of its own. */
export type OperationVerb = 'list' | 'paginate' | 'count' | 'create' | 'search' | 'get' | 'replace' | 'update' | 'delete' | 'recover' | 'softDelete';
export type OperationNotes = Partial<Record<OperationVerb, string>>;

function operation(resource: CompiledResource, notes: OperationNotes, id: OperationVerb, summary: string, op: Operation, rest: object): object {
  const note = notes[id] ? ` ${notes[id]}` : '';
  return {
    tags: [resource.name],
    operationId: `${id}${pascalCase(resource.name)}`,
    summary,
    description: `${permissionNote(resource, op)}${note}`,
    deprecated: false,
    ...rest,
  };
}

/**
 * Every path item of one resource's CRUD routes (generated, or mounted by a module with some
 * handlers of its own, whose differences `notes` describes).
 */
const totalExactHeader = {
  [TOTAL_EXACT_HEADER]: {
    description:
      "false: more records match than the resource's count threshold, and total is the cap (`count: { capped: N }`) or PostgreSQL's estimate (`count: { estimated: N }`); " +
      'with count=none, false means total is a lower bound; true: total counts every match',
    schema: { type: 'boolean' },
  },
};

/** What a list answer may carry beside the total's flag; a GET list (`linked`) also its tag and next link. */
const listHeaders = (linked: boolean) => ({
  ...totalExactHeader,
  ...(linked ? { ...etagHeader(true), Link: { description: 'While more items follow: <the same list with cursor=nextCursor>; rel="next"', schema: { type: 'string' } } } : {}),
  'Preference-Applied': { description: 'count=none when a Prefer: count=none header was honoured', schema: { type: 'string', enum: ['count=none'] } },
});

/** A page of records and its total, with the headers that say whether the total is exact and where the next page is. */
function listResponse(name: string, list: object, linked = true): object {
  return { ...jsonResponse(`A page of ${name} records`, list), headers: listHeaders(linked) };
}

/** The total alone, as a list would count it. */
function countResponse(name: string): object {
  const schema = {
    type: 'object',
    required: ['total'],
    additionalProperties: false,
    properties: { total: { type: 'integer', minimum: 0, description: `How many ${name} records match, as the list's total counts them` } },
  };
  return { ...jsonResponse(`How many ${name} records match`, schema), headers: totalExactHeader };
}

/** A JSON answer with the record's strong ETag. */
const taggedResponse = (description: string, schema: object) => ({ ...jsonResponse(description, schema), headers: etagHeader() });

export function resourcePaths(resource: CompiledResource, notes: OperationNotes = {}): OpenApiPaths {
  const paths: OpenApiPaths = {};
  const ifMatch = ifMatchParameter(resource.requireIfMatch);
  // 428 only where the definition requires If-Match.
  const conditionalErrors = resource.requireIfMatch ? [412, 428] : [412];
  const record = ref(schemaName(resource, 'record'));
  const list = ref(schemaName(resource, 'list'));
  const [path] = resource.paths;
  const base = `/api/${path}`;
  const n = resource.name;
  paths[base] = {
    get: operation(resource, notes, 'list', `List ${n} records (one page and the total)`, 'read', {
      parameters: [...listParameters(resource), ifNoneMatchParameter()],
      responses: { '200': listResponse(n, list), '304': notModifiedResponse(true), ...errorResponses(400, 401, 403, 500, 503) },
    }),
    post: operation(resource, notes, 'create', `Create ${article(n)} ${n}`, 'create', {
      parameters: organizationHeaderParameters(resource),
      requestBody: jsonBody(ref(schemaName(resource, 'create'))),
      responses: { '201': taggedResponse(`The created ${n}`, record), ...errorResponses(400, 401, 403, 409, 413, 415, 500, 503) },
    }),
  };
  paths[`${base}/${PAGINATION_PATH}`] = {
    get: operation(resource, notes, 'paginate', `List ${n} records (the list under Ever Gauzy's other spelling)`, 'read', {
      description: `${permissionNote(resource, 'read')} The same parameters and answer as GET /api/${path}.`,
      parameters: [...listParameters(resource), ifNoneMatchParameter()],
      responses: { '200': listResponse(n, list), '304': notModifiedResponse(true), ...errorResponses(400, 401, 403, 500, 503) },
    }),
  };
  paths[`${base}/${COUNT_PATH}`] = {
    get: operation(resource, notes, 'count', `Count ${n} records`, 'read', {
      description:
        `${permissionNote(resource, 'read')} Takes the list's parameters (take, skip, order and relations are checked, and do not change the total) ` +
        `and answers the total GET /api/${path} would give, by the same count policy.`,
      parameters: listParameters(resource),
      responses: { '200': countResponse(n), ...errorResponses(400, 401, 403, 500, 503) },
    }),
  };
  paths[`${base}/search`] = {
    post: operation(resource, notes, 'search', `Search ${n} records with the list parameters in the body`, 'read', {
      parameters: [preferParameter()],
      requestBody: searchBody(resource),
      responses: { '200': listResponse(n, list, false), ...errorResponses(400, 401, 403, 413, 415, 500, 503) },
    }),
  };
  paths[`${base}/{id}`] = {
    get: operation(resource, notes, 'get', `Read one ${n}`, 'read', {
      parameters: [idParameter(), relationsParameter(resource), selectParameter(resource), ...withDeletedParameters(resource), ifNoneMatchParameter()],
      responses: { '200': taggedResponse(`The ${n}`, answeredRecord(resource)), '304': notModifiedResponse(), ...errorResponses(400, 401, 403, 404, 500, 503) },
    }),
    put: operation(resource, notes, 'replace', `Replace ${article(n)} ${n} (absent optional fields are reset; the organization, owner and caller-filled fields are kept)`, 'update', {
      parameters: [idParameter(), ifMatch],
      requestBody: jsonBody(ref(schemaName(resource, 'replace'))),
      responses: { '200': taggedResponse(`The replaced ${n}`, record), ...errorResponses(400, 401, 403, 404, 409, ...conditionalErrors, 413, 415, 500, 503) },
    }),
    patch: operation(resource, notes, 'update', `Change some fields of ${article(n)} ${n}`, 'update', {
      parameters: [idParameter(), ifMatch],
      // An absent body is an empty patch: nothing changes.
      requestBody: jsonBody(ref(schemaName(resource, 'patch')), undefined, { required: false }),
      responses: { '200': taggedResponse(`The updated ${n}`, record), ...errorResponses(400, 401, 403, 404, 409, ...conditionalErrors, 413, 415, 500, 503) },
    }),
    delete: operation(resource, notes, 'delete', resource.softDelete ? `Delete ${article(n)} ${n} (marked deleted: PUT /{id}/recover brings it back)` : `Delete ${article(n)} ${n}`, 'delete', {
      parameters: [idParameter(), ifMatch],
      // 400 also when other records still reference it.
      responses: { '204': { description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, ...conditionalErrors, 500, 503) },
    }),
  };
  if (resource.softDelete) {
    Object.assign(paths, softDeletePaths(resource, base, record, ifMatch, conditionalErrors, (verb, summary, rest) => operation(resource, notes, verb, summary, 'delete', rest)));
  }
  return paths;
}
