/** The absolute address of a todo: every representation's `url`. */
export function todoUrl(baseUrl: string, id: string): string {
  return `${baseUrl}/api/todos/${id}`;
}
