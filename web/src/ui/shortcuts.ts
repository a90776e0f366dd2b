/** The keyboard shortcuts, as the help dialog lists them and `useShortcuts` handles them. */
export const SHORTCUTS: readonly { keys: string; does: string }[] = [
  { keys: 'n', does: 'New todo' },
  { keys: '/', does: 'Search' },
  { keys: 'j / k', does: 'Next / previous todo' },
  { keys: 'x', does: 'Complete or reopen the selected todo' },
  { keys: 'e', does: 'Edit the selected todo' },
  { keys: 'd', does: 'Delete the selected todo' },
  { keys: 'u', does: 'Undo the last delete' },
  { keys: 'Esc', does: 'Cancel editing, close this help' },
  { keys: 'Ctrl + Enter', does: 'Save while editing' },
  { keys: '?', does: 'Show these shortcuts' },
];

export interface ShortcutHandlers {
  readonly newTodo: () => void;
  readonly search: () => void;
  readonly move: (step: 1 | -1) => void;
  readonly toggle: () => void;
  readonly edit: () => void;
  readonly remove: () => void;
  readonly undo: () => void;
  readonly help: () => void;
}

/** Typing in a field is typing, not a shortcut. */
function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

export function handleShortcut(event: KeyboardEvent, handlers: ShortcutHandlers): void {
  if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
  const action: Record<string, () => void> = {
    n: handlers.newTodo,
    '/': handlers.search,
    j: () => handlers.move(1),
    k: () => handlers.move(-1),
    x: handlers.toggle,
    e: handlers.edit,
    d: handlers.remove,
    u: handlers.undo,
    '?': handlers.help,
  };
  const run = action[event.key];
  if (!run) return;
  event.preventDefault();
  run();
}
