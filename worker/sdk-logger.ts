import type { LogLevel, LogMetadata } from '@temporalio/common';
import { DefaultLogger } from '@temporalio/worker';

/**
 * The SDK's logger, less one expected notice: the delivery worker serves activities only, and the SDK
 * warns at each start that it has no workflows to poll for.
 */
export class WorkerLogger extends DefaultLogger {
  override log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (!message.startsWith('No workflows registered')) super.log(level, message, meta);
  }
}
