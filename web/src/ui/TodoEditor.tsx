import { useState } from 'preact/hooks';
import type { TodoPatch, TodoPriority } from '../../../src/todos/todo.schemas.js';
import type { ApiClient, Todo } from '../api/api-client.js';
import { ApiProblem, readableMessage } from '../api/api-problem.js';
import { PRIORITY_LABELS } from '../todos/todo-values.js';
import { LabelledOptions } from './LabelledOptions.js';

interface Draft {
  title: string;
  description: string;
  priority: TodoPriority;
  labels: string;
  dueDate: string;
}

function draftOf(todo: Todo): Draft {
  return {
    title: todo.title,
    description: todo.description ?? '',
    priority: todo.priority,
    labels: todo.labels.join(', '),
    dueDate: todo.due_date ?? todo.due_at?.slice(0, 10) ?? '',
  };
}

function labelsOf(text: string): string[] {
  return text
    .split(',')
    .map((label) => label.trim())
    .filter((label) => label !== '');
}

/** The merge patch of what the user changed, nothing else (a field left alone stays theirs). */
function patchOf(base: Todo, draft: Draft): TodoPatch {
  const before = draftOf(base);
  const patch: TodoPatch = {};
  if (draft.title !== before.title) patch.title = draft.title;
  if (draft.description !== before.description)
    patch.description = draft.description === '' ? null : draft.description;
  if (draft.priority !== before.priority) patch.priority = draft.priority;
  if (draft.labels !== before.labels) patch.labels = labelsOf(draft.labels);
  if (draft.dueDate !== before.dueDate) {
    patch.due_date = draft.dueDate === '' ? null : draft.dueDate;
    if (base.due_at !== null) patch.due_at = null;
  }
  return patch;
}

interface TodoEditorProps {
  readonly api: ApiClient;
  /** The todo as it was when editing began: the version the save is conditional on. */
  readonly base: Todo;
  /** The list's current copy; differs from `base` when someone else changed the todo meanwhile. */
  readonly latest: Todo;
  readonly onSaved: (todo: Todo) => void;
  readonly onRebase: (todo: Todo) => void;
  readonly onClose: () => void;
  readonly onAuthProblem: (problem: ApiProblem) => boolean;
}

/**
 * Inline editing. The save is a PATCH with `If-Match` on the version editing began from, so a
 * change made meanwhile (another tab, another person) is never overwritten silently: the server
 * answers 412 and the editor offers to reload.
 */
export function TodoEditor({
  api,
  base,
  latest,
  onSaved,
  onRebase,
  onClose,
  onAuthProblem,
}: TodoEditorProps) {
  const [draft, setDraft] = useState(() => draftOf(base));
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const idPrefix = `edit-${base.id}`;
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft((current) => ({ ...current, [key]: value }));

  async function save() {
    const patch = patchOf(base, draft);
    if (Object.keys(patch).length === 0) {
      onClose();
      return;
    }
    setBusy(true);
    try {
      onSaved(await api.update(base, patch));
    } catch (error) {
      if (!(error instanceof ApiProblem) || !onAuthProblem(error)) setProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  }

  async function reload() {
    setBusy(true);
    try {
      const current = await api.get(base.id);
      setDraft(draftOf(current));
      setProblem(null);
      onRebase(current);
    } catch (error) {
      setProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      class="editor"
      aria-label={`Edit “${base.title}”`}
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          onClose();
        } else if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          void save();
        }
      }}
    >
      {latest.version !== base.version && !problem && (
        <p class="note" role="status">
          This todo was changed elsewhere while you were editing.
        </p>
      )}
      <div class="field">
        <label for={`${idPrefix}-title`}>Title</label>
        <input
          id={`${idPrefix}-title`}
          value={draft.title}
          maxLength={500}
          required
          onInput={(event) => set('title', event.currentTarget.value)}
          autoFocus
        />
      </div>
      <div class="field">
        <label for={`${idPrefix}-description`}>Notes</label>
        <textarea
          id={`${idPrefix}-description`}
          rows={3}
          value={draft.description}
          onInput={(event) => set('description', event.currentTarget.value)}
        />
      </div>
      <div class="editor-row">
        <div class="field">
          <label for={`${idPrefix}-priority`}>Priority</label>
          <select
            id={`${idPrefix}-priority`}
            value={draft.priority}
            onChange={(event) => set('priority', event.currentTarget.value as TodoPriority)}
          >
            <LabelledOptions labels={PRIORITY_LABELS} />
          </select>
        </div>
        <div class="field">
          <label for={`${idPrefix}-labels`}>Labels</label>
          <input
            id={`${idPrefix}-labels`}
            placeholder="comma, separated"
            value={draft.labels}
            onInput={(event) => set('labels', event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for={`${idPrefix}-due`}>Due date</label>
          <input
            id={`${idPrefix}-due`}
            type="date"
            value={draft.dueDate}
            onInput={(event) => set('dueDate', event.currentTarget.value)}
          />
        </div>
      </div>
      {problem && (
        <div class="problem" role="alert">
          <span>{readableMessage(problem)}</span>
          {problem.code === 'precondition-failed' && (
            <button
              type="button"
              class="button button-small"
              onClick={() => void reload()}
              disabled={busy}
            >
              Reload
            </button>
          )}
        </div>
      )}
      <div class="editor-buttons">
        <button type="submit" class="button button-primary" disabled={busy}>
          Save
        </button>
        <button type="button" class="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
