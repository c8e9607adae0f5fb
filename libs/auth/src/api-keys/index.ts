export {
  API_KEY_LENGTH,
  API_KEY_PREFIX,
  apiKeyMatches,
  hashApiKey,
  newApiKey,
  parseApiKey,
  type ParsedApiKey,
} from './api-key.js';
export {
  ApiKeyNotFoundError,
  ApiKeyStore,
  apiKeyView,
  DEFAULT_API_KEY_GRACE_SECONDS,
  type ApiKeysDatabase,
  type ApiKeysTable,
  type ApiKeyStoreOptions,
} from './api-key.store.js';
