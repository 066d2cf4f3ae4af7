/**
 * How a secret variable's value is shown in an error or a log: never the value. A URL keeps its
 * scheme, host, port and path with its user and password masked (which Redis was meant is what an
 * operator needs to see); anything else is its length only.
 */
export function redacted(value: string): string {
  try {
    const url = new URL(value);
    if (url.host !== '') {
      if (url.username !== '') url.username = '***';
      if (url.password !== '') url.password = '***';
      url.search = url.search === '' ? '' : '?***';
      return url.toString();
    }
  } catch {
    // not a URL
  }
  return `(redacted, ${[...value].length} characters)`;
}
