// What a secret looks like once it is safe to print; shared by config redaction and the logger.
export const REDACTED = "[redacted]";

const URL_CREDENTIALS = /^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i;

/** redis://user:pw@host → redis://[redacted]@host */
export const withoutUrlCredentials = (s: string): string => s.replace(URL_CREDENTIALS, `$1${REDACTED}@`);
