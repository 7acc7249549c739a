// Social login settings: which providers are on (a client id and secret for each), and their
// endpoints, the public ones unless overridden. Read from the variables the configuration was
// loaded from (config.vars) when the module's routes are built, so a mistake stops start-up.
import { ConfigError, httpUrl, type Env } from '../../engine/config/values.js';

export const SOCIAL_PROVIDERS = ['google', 'github', 'microsoft', 'facebook'] as const;
export type SocialProvider = (typeof SOCIAL_PROVIDERS)[number];

export interface SocialProviderConfig {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  profileUrl: string;
  /** Where the provider sends the browser back: {apiBaseUrl}/api/auth/{provider}/callback unless set. */
  callbackUrl: string;
}

/** Each provider's settings; undefined where its login is off. */
export type SocialConfig = Record<SocialProvider, SocialProviderConfig | undefined>;

/** The providers' public endpoints; each can be overridden (tests point them at a stub on loopback). */
const PROVIDER_ENDPOINTS: Record<SocialProvider, { authorizeUrl: string; tokenUrl: string; profileUrl: string }> = {
  google: {
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    profileUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
  },
  github: {
    authorizeUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    profileUrl: 'https://api.github.com/user',
  },
  microsoft: {
    authorizeUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    profileUrl: 'https://graph.microsoft.com/oidc/userinfo',
  },
  facebook: {
    authorizeUrl: 'https://www.facebook.com/v19.0/dialog/oauth',
    tokenUrl: 'https://graph.facebook.com/v19.0/oauth/access_token',
    profileUrl: 'https://graph.facebook.com/me?fields=id,name,email,first_name,last_name',
  },
};

export function socialProviders(env: Env, apiBaseUrl: string): SocialConfig {
  const social = {} as SocialConfig;
  for (const provider of SOCIAL_PROVIDERS) {
    const prefix = provider.toUpperCase();
    const clientId = env[`${prefix}_CLIENT_ID`];
    const clientSecret = env[`${prefix}_CLIENT_SECRET`];
    if (Boolean(clientId) !== Boolean(clientSecret)) {
      throw new ConfigError(`${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET go together: set both, or neither to switch ${provider} login off`);
    }
    const defaults = PROVIDER_ENDPOINTS[provider];
    social[provider] = clientId && clientSecret
      ? {
          clientId,
          clientSecret,
          authorizeUrl: httpUrl(env, `${prefix}_AUTHORIZE_URL`, defaults.authorizeUrl),
          tokenUrl: httpUrl(env, `${prefix}_TOKEN_URL`, defaults.tokenUrl),
          profileUrl: httpUrl(env, `${prefix}_PROFILE_URL`, defaults.profileUrl),
          callbackUrl: httpUrl(env, `${prefix}_CALLBACK_URL`, `${apiBaseUrl}/api/auth/${provider}/callback`),
        }
      : undefined;
  }
  return social;
}
