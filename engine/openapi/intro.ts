// The document's intro (info.description), what Swagger UI shows above the operations: what the
// API is, then a line each for the token, lists, errors, rate limits and aliases, each linking
// the reference page that says the rest (engine/openapi/reference-pages.ts serves them).
import type { Engine, OpenApiPaths } from '../module.js';
import { ALIASES_EXTENSION } from './fragments.js';
import { referencePageUrl } from './reference-pages.js';

/** The reference pages the intro links, by name: `rate-limits` is /docs/rate-limits.md (AppOptions.docsDir). */
export interface ReferencePages {
  /** What every endpoint has in common: errors, routing, headers, records. */
  conventions: string;
  authentication: string;
  queryLanguage: string;
  rateLimits: string;
}

/** What the application says of itself in the document: the engine knows neither its name nor its sign-in route. */
export interface DocumentInfo {
  title: string;
  version: string;
  /** The document's first sentence: what the API is. */
  summary: string;
  /** How a client gets its token and sends it (the clause before "; every record belongs to the token's tenant"). */
  signIn: string;
  /** The bearer scheme's first sentence: where the token comes from. */
  tokenOrigin: string;
  /** The pages the intro links for what it leaves out; without them it links none. */
  pages?: ReferencePages;
}

/** Neutral words for an application that gives none. */
export const GENERIC_DOCUMENT_INFO: DocumentInfo = {
  title: 'API',
  version: '0.0.0',
  summary: 'A REST API.',
  signIn: 'Send `Authorization: Bearer <token>`',
  tokenOrigin: 'An access token.',
};

/**
 * The intro Swagger UI shows above the operations: short enough to read in a minute (what the API
 * is, the token, lists, errors, limits, aliases, a line each); the rest is on the pages it links.
 */
export function description(info: DocumentInfo, aliases: string | undefined): string {
  const link = (text: string, page: keyof ReferencePages) => (info.pages ? ` ([${text}](${referencePageUrl(info.pages[page])}))` : '');
  return [
    `${info.summary} Built from the server's own definitions and routes.`,
    '',
    `- **Token.** ${info.signIn}; every record belongs to the token's tenant${link('Authentication', 'authentication')}.`,
    '- **Lists** take `take`, `skip`, `order[field]=ASC|DESC`, `where[field]=value`, `relations[]` (and `search`, `startDate`/`endDate`, ' +
      `\`tags[]\` where offered); they answer \`{items, total}\`${link('Query language', 'queryLanguage')}.`,
    '- **Errors** are `{statusCode, message, error}`; a 400 lists every broken rule; a method a path lacks is a 405 with `Allow`' +
      `${link('API conventions', 'conventions')}.`,
    '- **Rate limits** count each request by caller tier, method and endpoint (each operation lists its own); ' +
      `a used-up one is a 429 with \`Retry-After\`${link('Rate limits', 'rateLimits')}.`,
    ...(aliases ? [`- **Aliases** (each path below them too) answer as the path in whose \`${ALIASES_EXTENSION}\` they are listed: ${aliases}.`] : []),
  ].join('\n');
}

/**
 * "/api/notes → /api/note, …": each alias of a resource's path once (it stands for every path
 * below it too); any other alias path (a module's own, one per name it takes) only counted, with
 * the first as an example, so that the intro stays a line however many a module declares.
 */
export function aliasesInWords(engine: Engine, paths: OpenApiPaths): string | undefined {
  const prefixes = [...engine.registry.values()].flatMap((r) => r.paths.slice(1).map((alias) => [`/api/${alias}`, `/api/${r.paths[0]}`] as const));
  const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
  const words = new Set<string>();
  const others: string[] = [];
  for (const [canonical, item] of Object.entries(paths)) {
    for (const alias of (item[ALIASES_EXTENSION] as string[] | undefined) ?? []) {
      const pair = prefixes.find(([a, c]) => under(alias, a) && under(canonical, c) && alias.slice(a.length) === canonical.slice(c.length));
      if (pair) words.add(`${pair[0]} → ${pair[1]}`);
      else others.push(`${alias} → ${canonical}`);
    }
  }
  others.sort();
  if (others.length === 1) words.add(others[0]);
  const listed = [...words].sort();
  if (others.length > 1) listed.push(`and ${others.length} more, such as ${others[0]}`);
  return listed.length ? listed.join(', ') : undefined;
}
