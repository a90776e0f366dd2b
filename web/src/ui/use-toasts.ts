import { useCallback, useRef, useState } from 'preact/hooks';

export interface ToastAction {
  readonly label: string;
  readonly run: () => void;
}

export interface Toast {
  readonly id: number;
  readonly message: string;
  readonly kind: 'info' | 'error';
  readonly action?: ToastAction;
}

const LIFETIME_MS = { info: 6000, error: 10_000 } as const;
/** Undo stays offered a little longer than a plain notice. */
const WITH_ACTION_MS = 10_000;

/** Short-lived notices; the newest offer of an action is also what the `u` shortcut runs. */
export function useToasts() {
  const [toasts, setToasts] = useState<readonly Toast[]>([]);
  const nextId = useRef(1);

  const dismiss = useCallback((id: number) => {
    setToasts((current) => current.filter((toast) => toast.id !== id));
  }, []);

  const show = useCallback(
    (message: string, kind: Toast['kind'] = 'info', action?: ToastAction) => {
      const id = nextId.current++;
      setToasts((current) => [
        ...current.slice(-3),
        { id, message, kind, ...(action ? { action } : {}) },
      ]);
      setTimeout(() => dismiss(id), action ? WITH_ACTION_MS : LIFETIME_MS[kind]);
      return id;
    },
    [dismiss],
  );

  /** Runs the action of the newest toast that offers one (undo), and closes that toast. */
  const runLatestAction = useCallback(() => {
    const latest = [...toasts].reverse().find((toast) => toast.action);
    if (!latest?.action) return false;
    dismiss(latest.id);
    latest.action.run();
    return true;
  }, [dismiss, toasts]);

  return { toasts, show, dismiss, runLatestAction };
}
