import type { Ref } from 'preact';
import { SHORTCUTS } from './shortcuts.js';

export function ShortcutsDialog({ dialogRef }: { dialogRef: Ref<HTMLDialogElement> }) {
  return (
    <dialog ref={dialogRef} class="panel shortcuts" aria-labelledby="shortcuts-title">
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map((shortcut) => (
          <div key={shortcut.keys} class="shortcut">
            <dt>
              <kbd>{shortcut.keys}</kbd>
            </dt>
            <dd>{shortcut.does}</dd>
          </div>
        ))}
      </dl>
      <form method="dialog">
        <button type="submit" class="button">
          Close
        </button>
      </form>
    </dialog>
  );
}
