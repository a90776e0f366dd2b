import type { Toast } from './use-toasts.js';

/** Notices in a live region: screen readers announce them without moving focus. */
export function Toasts({
  toasts,
  onDismiss,
}: {
  toasts: readonly Toast[];
  onDismiss: (id: number) => void;
}) {
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.map((toast) => (
        <div key={toast.id} class={`toast toast-${toast.kind}`} data-testid="toast">
          <span>{toast.message}</span>
          {toast.action && (
            <button
              type="button"
              class="button button-small"
              onClick={() => {
                onDismiss(toast.id);
                toast.action?.run();
              }}
            >
              {toast.action.label}
            </button>
          )}
          <button
            type="button"
            class="icon-button"
            aria-label="Dismiss"
            onClick={() => onDismiss(toast.id)}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
