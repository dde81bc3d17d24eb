/**
 * GitHub's runner scale set API (the Actions service), as a scale set in `scaleset_api` intake
 * mode needs it, in the scale set's own terms. The adapter (src/github/actions-service/) turns
 * HTTP, tokens and the service's `{typeName, message}` errors into these values; nothing here
 * knows a URL path or a header.
 */

/** How a call failed, as the listener acts on it. */
export type ActionsErrorKind =
  /** 409: another session lives, or the name is taken. */
  | "conflict"
  /** 404: the scale set, session or runner is gone. */
  | "not_found"
  /** 401/403: the token (admin or queue) is no longer good. */
  | "unauthorized"
  /** 5xx, 429, network, timeout: try again later. */
  | "retryable"
  /** A successful answer larger than the client reads (MAX_ACTIONS_BODY_BYTES): left unread. */
  | "too_large"
  /** Anything else: a request GitHub will never accept as it is. */
  | "permanent";

export interface ActionsError {
  kind: ActionsErrorKind;
  message: string;
  status?: number;
  /** The service's exception type, e.g. `RunnerScaleSetSessionConflictException`, when it named one. */
  typeName?: string;
}

/** Calls never throw: every outcome is a value. */
export type ActionsResult<T> = { ok: true; value: T } | { ok: false; error: ActionsError };

export interface RunnerScaleSetInfo {
  id: number;
  name: string;
  runnerGroupId: number;
  labels: string[];
}

/** What the service counts for a scale set; the listener scales on `totalAssignedJobs`. */
export interface ScaleSetStatistics {
  totalAvailableJobs: number;
  totalAcquiredJobs: number;
  totalAssignedJobs: number;
  totalRunningJobs: number;
  totalRegisteredRunners: number;
  totalBusyRunners: number;
  totalIdleRunners: number;
}

/** A message session: where to poll, and the token the queue takes. */
export interface ListenerSession {
  sessionId: string;
  messageQueueUrl: string;
  messageQueueAccessToken: string;
  statistics: ScaleSetStatistics | null;
}

export type JobMessageType = "JobAvailable" | "JobAssigned" | "JobStarted" | "JobCompleted";

/** One job event from the queue. Times are unix ms; GitHub's zero time is null. */
export interface JobMessage {
  type: JobMessageType;
  runnerRequestId: number;
  /** `owner/name`. */
  repository: string;
  owner: string;
  /** The service's job id (not the REST workflow job id). */
  jobId: string;
  jobDisplayName: string;
  workflowRunId: number;
  requestLabels: string[];
  queueTime: number | null;
  runnerAssignTime: number | null;
  finishTime: number | null;
  runnerId: number | null;
  runnerName: string | null;
  /** JobCompleted: `succeeded`, `failed`, `canceled`, … */
  result: string | null;
}

/**
 * A job item of a known type that failed validation (a field missing, of the wrong type or out of
 * bounds). What passed on its own is kept (a field that failed is empty: "", [], 0 or null),
 * with the problems; its type and request id are null when they are what failed.
 */
export interface InvalidJobItem extends Omit<JobMessage, "type" | "runnerRequestId"> {
  type: JobMessageType | null;
  runnerRequestId: number | null;
  /** `field: what is wrong`, one per failure; never the value itself. */
  problems: string[];
}

export interface QueueMessage {
  messageId: number;
  statistics: ScaleSetStatistics | null;
  jobs: JobMessage[];
  /** Items that failed validation: recorded and logged, never dropped silently. */
  invalid: InvalidJobItem[];
  /** The types of items this coordinator does not know (the service may add some): skipped. */
  skipped: string[];
}

/**
 * A message that cannot be acted on as it came: not JSON, its body not a JSON array, its
 * envelope malformed, or too large to read. Its id was readable, so it can be acknowledged
 * (after a few tries: listener.ts).
 */
export interface UnreadableMessage {
  messageId: number;
  unreadable: string;
}

/** The runner scale set API for one GitHub entity (repository, organization or enterprise). */
export interface ActionsServicePort {
  runnerGroupId(name: string): Promise<ActionsResult<number>>;
  /** The scale set with this name in the group, or null. */
  findScaleSet(runnerGroupId: number, name: string): Promise<ActionsResult<RunnerScaleSetInfo | null>>;
  getScaleSet(id: number): Promise<ActionsResult<RunnerScaleSetInfo>>;
  createScaleSet(input: { name: string; runnerGroupId: number; labels: string[] }): Promise<ActionsResult<RunnerScaleSetInfo>>;
  deleteScaleSet(id: number): Promise<ActionsResult<void>>;
  createSession(scaleSetId: number, owner: string): Promise<ActionsResult<ListenerSession>>;
  refreshSession(scaleSetId: number, sessionId: string): Promise<ActionsResult<ListenerSession>>;
  deleteSession(scaleSetId: number, sessionId: string): Promise<ActionsResult<void>>;
  /**
   * One long poll: a message, one that came but cannot be read (with its id), or null when none
   * came in the service's wait (202). A message without a readable id is an error.
   */
  getMessage(
    session: ListenerSession,
    lastMessageId: number,
    maxCapacity: number,
  ): Promise<ActionsResult<QueueMessage | UnreadableMessage | null>>;
  deleteMessage(session: ListenerSession, messageId: number): Promise<ActionsResult<void>>;
  /** The runner request ids the scale set now holds. */
  acquireJobs(scaleSetId: number, session: ListenerSession, runnerRequestIds: number[]): Promise<ActionsResult<number[]>>;
  generateJitConfig(scaleSetId: number, name: string): Promise<ActionsResult<{ runnerId: number; encodedJitConfig: string }>>;
  findRunner(name: string): Promise<ActionsResult<{ id: number; name: string } | null>>;
  /** A runner already gone counts as removed. */
  removeRunner(runnerId: number): Promise<ActionsResult<void>>;
}
