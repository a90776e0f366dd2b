/**
 * The `Prefer` request header (RFC 7240): `token [= value] *(; parameter)`, comma-separated,
 * possibly over several header lines. Names are case-insensitive; values may be quoted.
 * Preferences are hints, so anything unparseable is ignored, never an error.
 */
export function preferences(header: string | readonly string[] | undefined): Map<string, string> {
  const found = new Map<string, string>();
  const lines = header === undefined ? [] : typeof header === 'string' ? [header] : header;
  for (const line of lines) {
    for (const item of line.split(',')) {
      const [preference = ''] = item.split(';');
      const match = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*(?:"([^"]*)"|([^\s"]*)))?\s*$/.exec(
        preference,
      );
      const name = match?.[1]?.toLowerCase();
      // The first occurrence of a preference wins (RFC 7240, section 2).
      if (name !== undefined && !found.has(name)) found.set(name, match?.[2] ?? match?.[3] ?? '');
    }
  }
  return found;
}
