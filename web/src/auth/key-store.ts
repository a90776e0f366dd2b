const STORAGE_KEY = 'todo-api.api-key';

/**
 * Where the API key lives in this browser: for this tab only (sessionStorage) unless the user
 * asks to be remembered on this device (localStorage). Never in the URL or a cookie.
 */
export function readKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY) ?? localStorage.getItem(STORAGE_KEY);
}

export function saveKey(key: string, remember: boolean): void {
  forgetKey();
  (remember ? localStorage : sessionStorage).setItem(STORAGE_KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  localStorage.removeItem(STORAGE_KEY);
}
