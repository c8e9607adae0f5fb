import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { Result, Task } from '@modelcontextprotocol/sdk/types.js';

/**
 * The sessions' tasks (2025-11-25 `tasks`), kept in memory as the SDK's own store keeps them, that also tell a task's
 * call when the client cancels the task (`tasks/cancel`, which the SDK answers by setting the status): the call is
 * then sealed if it has not started, as for a cancelled request, and its outcome is no longer stored on the task.
 */
export class CancellableTaskStore extends InMemoryTaskStore {
  private readonly running = new Map<string, AbortController>();

  /** Aborts when the client cancels task `taskId`; one signal per task, forgotten once the task has ended. */
  signalOf(taskId: string): AbortSignal {
    let controller = this.running.get(taskId);
    if (!controller) {
      controller = new AbortController();
      this.running.set(taskId, controller);
    }
    return controller.signal;
  }

  override async updateTaskStatus(
    taskId: string,
    status: Task['status'],
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    if (status === 'cancelled') this.running.get(taskId)?.abort();
    if (isTerminal(status)) this.running.delete(taskId);
  }

  override async storeTaskResult(
    taskId: string,
    status: 'completed' | 'failed',
    result: Result,
    sessionId?: string,
  ): Promise<void> {
    try {
      await super.storeTaskResult(taskId, status, result, sessionId);
    } finally {
      this.running.delete(taskId);
    }
  }
}
