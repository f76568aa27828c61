import { numberedCredentials } from '../../credential-binding.js';

/**
 * The env-management variables an HTTPRequestNode's headers may name, each bound to the base URL
 * setting it was entered under: a key is sent only to a request URL under that base (and reads as
 * unset once the base changes, as every provider key does), so a node pointed at another host,
 * by its config or its input, never carries it there.
 */
const HTTP = numberedCredentials('HTTP');

export const HTTP_CREDENTIALS = HTTP.bindings;
export const HTTP_CREDENTIAL_VARIABLES = HTTP.variables;
export const HTTP_KEY_BASES = HTTP.keyBases;
