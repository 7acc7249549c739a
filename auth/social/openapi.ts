// Pieces of the social login routes' documentation (auth/social/routes.ts): public routes
// answering with redirects.
import type { SocialProvider } from './config.js';

export const LABEL: Record<SocialProvider, string> = { google: 'Google', github: 'GitHub', microsoft: 'Microsoft', facebook: 'Facebook' };

/** A redirect, without a body, setting (start) or clearing (callback) the cookie that binds the state to the browser. */
export const redirectAnswer = (description: string, cookie: string) => ({
  description,
  headers: {
    Location: { description: 'Where the browser goes next', schema: { type: 'string', format: 'uri' } },
    'Set-Cookie': { description: cookie, schema: { type: 'string' } },
  },
});

export const queryParameter = (name: string, description: string) => ({ name, in: 'query', required: false, description, schema: { type: 'string' } });
