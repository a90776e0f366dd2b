import type { Ref } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { SORTS, type ListView } from '../todos/list-view.js';
import { PRIORITY_LABELS, STATUS_LABELS } from '../todos/todo-values.js';
import { LabelledOptions } from './LabelledOptions.js';

interface ToolbarProps {
  readonly view: ListView;
  /** Applies to the current view, whatever it is by then (text fields apply after a pause). */
  readonly onChange: (change: Partial<ListView>) => void;
  readonly searchRef: Ref<HTMLInputElement>;
}

/** Typing is not a query per key: text fields apply after a short pause. */
const TYPING_PAUSE_MS = 250;

/** Text that applies after a pause in typing, or at once on Enter. */
function useDebouncedText(value: string, apply: (text: string) => void) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  // Runs on text changes only: a new `apply` (the view changed) must not re-apply old text.
  useEffect(() => {
    if (text === value) return;
    const timer = setTimeout(() => apply(text), TYPING_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [text]);
  return [text, setText] as const;
}

export function Toolbar({ view, onChange, searchRef }: ToolbarProps) {
  const [q, setQ] = useDebouncedText(view.q, (text) => onChange({ q: text }));
  const [labels, setLabels] = useDebouncedText(view.labels, (text) => onChange({ labels: text }));
  return (
    <section class="toolbar" aria-label="Filter and sort">
      <div class="field field-search">
        <label for="search">Search</label>
        <input
          id="search"
          type="search"
          ref={searchRef}
          placeholder="Words in title or notes"
          maxLength={200}
          value={q}
          onInput={(event) => setQ(event.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for="filter-status">Status</label>
        <select
          id="filter-status"
          value={view.status}
          onChange={(event) => onChange({ status: event.currentTarget.value })}
        >
          <option value="active">Active</option>
          <option value="all">All</option>
          <LabelledOptions labels={STATUS_LABELS} />
        </select>
      </div>
      <div class="field">
        <label for="filter-priority">Priority</label>
        <select
          id="filter-priority"
          value={view.priority}
          onChange={(event) => onChange({ priority: event.currentTarget.value })}
        >
          <option value="all">Any</option>
          <LabelledOptions labels={PRIORITY_LABELS} />
        </select>
      </div>
      <div class="field">
        <label for="filter-labels">Labels</label>
        <input
          id="filter-labels"
          placeholder="work, home"
          value={labels}
          onInput={(event) => setLabels(event.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for="sort">Sort</label>
        <select
          id="sort"
          value={view.sort}
          onChange={(event) => onChange({ sort: event.currentTarget.value })}
        >
          {SORTS.map((sort) => (
            <option key={sort.value} value={sort.value}>
              {sort.label}
            </option>
          ))}
        </select>
      </div>
      <label class="checkbox field-overdue">
        <input
          type="checkbox"
          checked={view.overdue}
          onChange={(event) => onChange({ overdue: event.currentTarget.checked })}
        />
        Overdue only
      </label>
    </section>
  );
}
