import { TODO_PRIORITIES, TODO_STATUSES } from './todo-values.js';

/** What the list shows: the filters, search and sort the toolbar sets, kept in the page URL. */
export interface ListView {
  /** A status, `active` (not completed or cancelled), or `all`. */
  status: string;
  priority: string;
  labels: string;
  overdue: boolean;
  q: string;
  sort: string;
}

export const DEFAULT_VIEW: ListView = {
  status: 'active',
  priority: 'all',
  labels: '',
  overdue: false,
  q: '',
  sort: '-created_at',
};

export const ACTIVE_STATUSES = ['open', 'in_progress', 'blocked', 'deferred'] as const;

export const SORTS: readonly { value: string; label: string }[] = [
  { value: '-created_at', label: 'Newest first' },
  { value: 'order', label: 'My order' },
  { value: '-updated_at', label: 'Recently changed' },
  { value: 'due_at', label: 'Due soonest' },
  { value: '-priority', label: 'Most urgent' },
  { value: 'title', label: 'Title A–Z' },
  { value: 'status', label: 'Status' },
];

const PAGE_SIZE = 50;

/** The `/api/todos` query for a view: only what differs from "everything". */
export function listQuery(view: ListView): URLSearchParams {
  const params = new URLSearchParams();
  if (view.status === 'active') params.set('status', ACTIVE_STATUSES.join(','));
  else if (view.status !== 'all') params.set('status', view.status);
  if (view.priority !== 'all') params.set('priority', view.priority);
  if (view.labels.trim() !== '') params.set('labels', view.labels.trim());
  if (view.overdue) params.set('overdue', 'true');
  if (view.q.trim() !== '') params.set('q', view.q.trim());
  params.set('sort', view.sort);
  params.set('limit', String(PAGE_SIZE));
  return params;
}

/** The page URL's query for a view (shareable, survives a reload). */
export function viewToSearch(view: ListView): string {
  const params = new URLSearchParams();
  for (const key of Object.keys(DEFAULT_VIEW) as (keyof ListView)[]) {
    if (view[key] !== DEFAULT_VIEW[key]) params.set(key, String(view[key]));
  }
  const search = params.toString();
  return search === '' ? '' : `?${search}`;
}

/** Reads a view back from the page URL; values the toolbar does not offer fall back to defaults. */
export function viewFromSearch(search: string): ListView {
  const params = new URLSearchParams(search);
  const pick = (value: string | null, allowed: readonly string[], fallback: string) =>
    value !== null && allowed.includes(value) ? value : fallback;
  return {
    status: pick(params.get('status'), ['active', 'all', ...TODO_STATUSES], DEFAULT_VIEW.status),
    priority: pick(params.get('priority'), ['all', ...TODO_PRIORITIES], DEFAULT_VIEW.priority),
    labels: params.get('labels') ?? '',
    overdue: params.get('overdue') === 'true',
    q: params.get('q') ?? '',
    sort: pick(
      params.get('sort'),
      SORTS.map((sort) => sort.value),
      DEFAULT_VIEW.sort,
    ),
  };
}
