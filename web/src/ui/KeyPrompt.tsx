import { useState } from 'preact/hooks';

interface KeyPromptProps {
  /** Why the key is asked for again (a refused key), if it is. */
  readonly problem: string | null;
  readonly onSubmit: (key: string, remember: boolean) => void;
}

/** Shown when the server answers 401: this server needs an API key (`npm run tokens -- create`). */
export function KeyPrompt({ problem, onSubmit }: KeyPromptProps) {
  const [key, setKey] = useState('');
  const [remember, setRemember] = useState(false);
  return (
    <form
      class="panel key-prompt"
      aria-labelledby="key-prompt-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (key.trim() !== '') onSubmit(key.trim(), remember);
      }}
    >
      <h2 id="key-prompt-title">API key required</h2>
      <p>
        This server serves only authenticated requests. Paste an API key (<code>tdk_…</code>, made
        with <code>npm run tokens -- create</code>) or an access token.
      </p>
      {problem && (
        <p class="error-text" role="alert">
          {problem}
        </p>
      )}
      <label for="api-key">API key</label>
      <input
        id="api-key"
        type="password"
        autocomplete="off"
        spellcheck={false}
        value={key}
        onInput={(event) => setKey(event.currentTarget.value)}
        required
      />
      <label class="checkbox">
        <input
          type="checkbox"
          checked={remember}
          onChange={(event) => setRemember(event.currentTarget.checked)}
        />
        Remember on this device
      </label>
      <button type="submit" class="button button-primary">
        Use this key
      </button>
    </form>
  );
}
