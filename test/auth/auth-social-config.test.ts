// Social login settings (auth/social/config.ts), read from the variables the configuration was
// loaded from: each provider on with both credentials, off with neither, and a mistake refused
// with a sentence naming the variable.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { socialProviders } from '../../auth/social/config.js';
import { ConfigError, loadConfig } from '../../engine/config/config.js';

function providersOf(env: Record<string, string>) {
  const config = loadConfig(env);
  return socialProviders(config.vars, config.apiBaseUrl);
}

function refusal(env: Record<string, string>): string {
  try {
    providersOf(env);
  } catch (err) {
    assert.instance(err, ConfigError);
    return (err as Error).message;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
}

test('social providers: off without credentials, both credentials or neither, endpoints overridable', () => {
  const off = providersOf({});
  assert.equal(Object.values(off), [undefined, undefined, undefined, undefined]);
  assert.is(refusal({ GITHUB_CLIENT_ID: 'id' }), 'GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET go together: set both, or neither to switch github login off');
  const on = providersOf({ PORT: '4100', GOOGLE_CLIENT_ID: 'gid', GOOGLE_CLIENT_SECRET: 'gsecret', GOOGLE_TOKEN_URL: 'http://127.0.0.1:9/token' });
  assert.equal(on.google, {
    clientId: 'gid',
    clientSecret: 'gsecret',
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'http://127.0.0.1:9/token',
    profileUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    callbackUrl: 'http://localhost:4100/api/auth/google/callback',
  });
  assert.is(on.github, undefined);
  assert.is(refusal({ FACEBOOK_CLIENT_ID: 'a', FACEBOOK_CLIENT_SECRET: 'b', FACEBOOK_PROFILE_URL: 'graph' }), 'FACEBOOK_PROFILE_URL must be an http(s) URL, got "graph"');
});

test.run();
