import type { Ref } from 'preact';
import { useState } from 'preact/hooks';

interface AddTodoProps {
  readonly inputRef: Ref<HTMLInputElement>;
  /** Resolves true when the todo was created (the field is then cleared). */
  readonly onAdd: (title: string) => Promise<boolean>;
}

export function AddTodo({ inputRef, onAdd }: AddTodoProps) {
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);

  async function submit() {
    if (title.trim() === '' || busy) return;
    setBusy(true);
    if (await onAdd(title)) setTitle('');
    setBusy(false);
  }

  return (
    <form
      class="add-todo"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <label for="new-todo" class="visually-hidden">
        New todo
      </label>
      <input
        id="new-todo"
        ref={inputRef}
        placeholder="What needs doing?"
        maxLength={500}
        autocomplete="off"
        value={title}
        onInput={(event) => setTitle(event.currentTarget.value)}
      />
      <button type="submit" class="button button-primary" disabled={busy || title.trim() === ''}>
        Add
      </button>
    </form>
  );
}
