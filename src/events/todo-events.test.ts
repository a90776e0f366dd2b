import { describe, expect, it } from 'vitest';
import type { Todo } from '../todos/todo.schemas.js';
import { eventOf, eventsOfChange } from './todo-events.js';

const BEFORE: Todo = {
  id: '0190d3a8-0000-7000-8000-000000000001',
  url: 'http://todo.test/api/todos/0190d3a8-0000-7000-8000-000000000001',
  title: 'Buy milk',
  description: null,
  status: 'open',
  completed: false,
  completed_at: null,
  priority: 'none',
  order: 1024,
  labels: ['home'],
  due_date: null,
  due_at: null,
  metadata: {},
  version: 1,
  created_at: '2026-11-21T10:00:00.000Z',
  updated_at: '2026-11-21T10:00:00.000Z',
  deleted_at: null,
};

const after = (changes: Partial<Todo>): Todo => ({ ...BEFORE, version: 2, ...changes });
const typesOf = (before: Todo, next: Todo) => eventsOfChange(before, next).map((e) => e.type);

describe('the events of a change', () => {
  it('names the changed fields of an update, and only those', () => {
    const events = eventsOfChange(BEFORE, after({ title: 'Buy oat milk', labels: ['home', 'x'] }));
    expect(events).toHaveLength(1);
    expect(events[0]?.type).toBe('todo.updated');
    expect(events[0]?.data.changed).toEqual(['title', 'labels']);
  });

  it('sees a change inside metadata', () => {
    expect(eventsOfChange(BEFORE, after({ metadata: { a: '1' } }))[0]?.data.changed).toEqual([
      'metadata',
    ]);
  });

  it('is status_changed + completed for a completion, never updated', () => {
    const completed = after({
      status: 'completed',
      completed: true,
      completed_at: '2026-11-21T11:00:00.000Z',
    });
    const events = eventsOfChange(BEFORE, completed);
    expect(events.map((e) => e.type)).toEqual(['todo.status_changed', 'todo.completed']);
    expect(events[0]?.data).toMatchObject({ from: 'open', to: 'completed' });
  });

  it('is status_changed + reopened when a closed todo opens again', () => {
    const completed = { ...BEFORE, status: 'completed' as const, completed: true };
    const cancelled = { ...BEFORE, status: 'cancelled' as const };
    expect(typesOf(completed, after({ status: 'open' }))).toEqual([
      'todo.status_changed',
      'todo.reopened',
    ]);
    expect(typesOf(cancelled, after({ status: 'open' }))).toEqual([
      'todo.status_changed',
      'todo.reopened',
    ]);
    // Back to open from a parked status is no reopening.
    const blocked = { ...BEFORE, status: 'blocked' as const };
    expect(typesOf(blocked, after({ status: 'open' }))).toEqual(['todo.status_changed']);
  });

  it('reports fields and status together when one write changes both', () => {
    expect(typesOf(BEFORE, after({ title: 'x', status: 'in_progress' }))).toEqual([
      'todo.updated',
      'todo.status_changed',
    ]);
  });

  it('is nothing when nothing changed', () => {
    expect(eventsOfChange(BEFORE, { ...BEFORE })).toEqual([]);
  });

  it('carries the todo without its url', () => {
    const event = eventOf('todo.created', BEFORE);
    expect(event.data.todo).not.toHaveProperty('url');
    expect(event.data.todo.id).toBe(BEFORE.id);
  });
});
