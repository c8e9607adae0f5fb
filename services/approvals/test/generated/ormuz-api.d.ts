// Generated from the served /openapi.json by openapi-typescript (test/api-document.int.spec.ts);
// ORMUZ_UPDATE_API_CLIENT=1 npm test -- services/approvals/test/api-document rewrites it. Do not edit.
export interface paths {
    "/v1/tenants/{tenant}/calls": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Submit a tool call to the gate: it is refused, staged for its owner, or authorized
         * @description Runs `policy.submit` with the caller's credential.
         */
        post: operations["policySubmit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/calls/{call_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A call's status, and with timeline=true every event of it; with as_of, as it stood then
         * @description Runs `policy.status` with the caller's credential.
         */
        get: operations["policyStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/calls/{call_id}/seal": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Make sure a call that has not started never runs
         * @description Runs `policy.seal` with the caller's credential.
         */
        post: operations["policySeal"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/agents/{agent_id}/grant": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An agent's grant
         * @description Runs `policy.grants.get` with the caller's credential.
         */
        get: operations["policyGrantsGet"];
        /**
         * Replace what an agent may call
         * @description Runs `policy.grants.set` with the caller's credential.
         */
        put: operations["policyGrantsSet"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/agents/{agent_id}/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tools an agent is offered, as models see them
         * @description Runs `policy.tools` with the caller's credential.
         */
        get: operations["policyTools"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/agents/{agent_id}/tools/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Search the tools an agent is offered
         * @description Runs `policy.tools.search` with the caller's credential.
         */
        get: operations["policyToolsSearch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/risk/apps": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's finance app lists
         * @description Runs `policy.risk.apps.get` with the caller's credential.
         */
        get: operations["policyRiskAppsGet"];
        /**
         * Replace the tenant's finance app lists
         * @description Runs `policy.risk.apps.set` with the caller's credential.
         */
        put: operations["policyRiskAppsSet"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/policy/settings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's policy settings: its taint rule
         * @description Runs `policy.settings.get` with the caller's credential.
         */
        get: operations["policySettingsGet"];
        /**
         * Replace the tenant's policy settings (taint_rule: matching or every_write)
         * @description Runs `policy.settings.set` with the caller's credential.
         */
        put: operations["policySettingsSet"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/devices": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's connected devices
         * @description Runs `device-bridge.devices` with the caller's credential.
         */
        get: operations["deviceBridgeDevices"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/device-credentials": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's device credentials (never their tokens), or one device's
         * @description Runs `device-bridge.credentials.list` with the caller's credential.
         */
        get: operations["deviceBridgeCredentialsList"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/devices/{device_id}/credentials": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Issue a device a new token, beside any it has; the token is shown only in this answer
         * @description Runs `device-bridge.credentials.issue` with the caller's credential.
         */
        post: operations["deviceBridgeCredentialsIssue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/devices/{device_id}/credentials/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Issue a device a new token and end its others after a grace period
         * @description Runs `device-bridge.credentials.rotate` with the caller's credential.
         */
        post: operations["deviceBridgeCredentialsRotate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/devices/{device_id}/credentials/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * End one of a device's credentials, or all of them, closing the connections that used them
         * @description Runs `device-bridge.credentials.revoke` with the caller's credential.
         */
        post: operations["deviceBridgeCredentialsRevoke"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's API keys (never the keys themselves), or one agent's
         * @description Runs `policy.keys.list` with the caller's credential.
         */
        get: operations["policyKeysList"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/agents/{agent_id}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Issue an agent an API key, beside any it has; the key is shown only in this answer
         * @description Runs `policy.keys.issue` with the caller's credential.
         */
        post: operations["policyKeysIssue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/agents/{agent_id}/keys/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Issue an agent a new API key and end its others after a grace period
         * @description Runs `policy.keys.rotate` with the caller's credential.
         */
        post: operations["policyKeysRotate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/agents/{agent_id}/keys/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * End one of an agent's API keys, or all of them, from the next request on
         * @description Runs `policy.keys.revoke` with the caller's credential.
         */
        post: operations["policyKeysRevoke"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/audit/calls/{call_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A call's audit record
         * @description Runs `audit.call` with the caller's credential.
         */
        get: operations["auditCall"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/audit/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A page of the tenant's archived events, in stream order
         * @description Runs `audit.events` with the caller's credential.
         */
        get: operations["auditEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/conversations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start a conversation: an agent works on a task, every tool call it makes governed
         * @description Runs `model-loop.start` with the caller's credential.
         */
        post: operations["modelLoopStart"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/conversations/{conversation_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A conversation; with as_of, as it stood then, folded from the log
         * @description Runs `model-loop.get` with the caller's credential.
         */
        get: operations["modelLoopGet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/agents/{agent_id}/model": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An agent's model and where it is reached (never a key)
         * @description Runs `model-loop.agents.get` with the caller's credential.
         */
        get: operations["modelLoopAgentsGet"];
        /**
         * Choose an agent's model and where it is reached; conversations started without a model use it
         * @description Runs `model-loop.agents.set` with the caller's credential.
         */
        put: operations["modelLoopAgentsSet"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/agent-models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every agent of the tenant with a model configured
         * @description Runs `model-loop.agents.list` with the caller's credential.
         */
        get: operations["modelLoopAgentsList"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/approvals": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The owner's inbox: staged calls waiting for a decision (status=all: every one)
         * @description Runs `approvals.list` with the caller's credential.
         */
        get: operations["approvalsList"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/approvals/{approval_id}/approve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve a staged call: it runs, with exactly the arguments shown
         * @description Runs `approvals.approve` with the caller's credential.
         */
        post: operations["approvalsApprove"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/approvals/{approval_id}/deny": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deny a staged call: it never runs
         * @description Runs `approvals.deny` with the caller's credential.
         */
        post: operations["approvalsDeny"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's webhook endpoints (never their signing secrets)
         * @description Runs `approvals.webhooks.list` with the caller's credential.
         */
        get: operations["approvalsWebhooksList"];
        put?: never;
        /**
         * Register a webhook endpoint (its signing secret is shown only in this answer), or change one named by webhook_id
         * @description Runs `approvals.webhooks.set` with the caller's credential.
         */
        post: operations["approvalsWebhooksSet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/webhooks/{webhook_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Remove a webhook endpoint: it is sent nothing more; its deliveries stay in the log
         * @description Runs `approvals.webhooks.remove` with the caller's credential.
         */
        delete: operations["approvalsWebhooksRemove"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/webhook-deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's newest webhook deliveries with every attempt, narrowed by endpoint, status or approval
         * @description Runs `approvals.webhooks.deliveries` with the caller's credential.
         */
        get: operations["approvalsWebhooksDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's events, from a sequence or a time, then live, as server-sent events
         * @description Server-sent events. Each event is one message of the context's stream: `id:` is its stream sequence, `data:` one line of JSON, a `TenantEventsMessage` (components.schemas). Without `from` or `Last-Event-ID`, the stream starts with the next event appended. Readers: analyst, operator, admin.
         */
        get: operations["tenantEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document */
        get: operations["openApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        ApiError: {
            error: {
                code: string;
                message: string;
            };
        };
        PolicySubmitReply: {
            call_id: string;
            status: string;
            duplicate: boolean;
            payload_sha256: string;
            message: string | null;
            approval_id: string | null;
            summary: string | null;
            expires_at: string | null;
        };
        PolicySubmitBody: {
            agent_id: string;
            tool: string;
            arguments: Record<string, never>;
            origin: {
                /** @constant */
                kind: "conversation";
                conversation_id: string;
                turn: number;
                index: number;
            } | {
                /** @constant */
                kind: "operation";
                operation_id: string;
            };
            device_id: string | null;
            correlation_id?: string;
            taint?: {
                sources: {
                    call_id: string;
                    tool: string;
                    description: string;
                    strings: string[];
                }[];
            };
            denials?: {
                call_id: string;
                tool: string;
                arguments: Record<string, never>;
                reason: string | null;
            }[];
        };
        PolicyStatusReply: {
            status: {
                /** @enum {unknown} */
                status: "absent" | "requested" | "refused" | "staged" | "approved" | "denied" | "expired" | "authorized" | "dispatched" | "started" | "outcome_unknown" | "succeeded" | "failed" | "sealed";
                call_id: string | null;
                tool: string | null;
                payload_sha256: string | null;
                outcome: ({
                    /** @constant */
                    kind: "succeeded";
                    result: unknown;
                } | {
                    /** @constant */
                    kind: "failed";
                    error: {
                        code: string;
                        message: string;
                    };
                }) | null;
                unknown_cause: ("timeout" | "connection_lost" | "reboot" | "status_missing") | null;
                pending_approval: {
                    approval_id: string;
                    summary: string;
                    expires_at: string;
                } | null;
                sealed_by: string | null;
                next_step: string;
            };
            version: number;
            timeline?: {
                seq: number;
                type: string;
                time: string;
                source: string;
                data: unknown;
            }[];
        };
        PolicySealReply: {
            /** @enum {unknown} */
            status: "absent" | "requested" | "refused" | "staged" | "approved" | "denied" | "expired" | "authorized" | "dispatched" | "started" | "outcome_unknown" | "succeeded" | "failed" | "sealed";
            call_id: string | null;
            tool: string | null;
            payload_sha256: string | null;
            outcome: ({
                /** @constant */
                kind: "succeeded";
                result: unknown;
            } | {
                /** @constant */
                kind: "failed";
                error: {
                    code: string;
                    message: string;
                };
            }) | null;
            unknown_cause: ("timeout" | "connection_lost" | "reboot" | "status_missing") | null;
            pending_approval: {
                approval_id: string;
                summary: string;
                expires_at: string;
            } | null;
            sealed_by: string | null;
            next_step: string;
            sealed_at: string | null;
            already_sealed: boolean;
            message: string;
        };
        PolicySealBody: {
            reason: string;
        };
        PolicyGrantsGetReply: {
            tenant: string;
            agent_id: string;
            allow: string[];
            deny?: string[];
            pins?: {
                [key: string]: number;
            };
        };
        PolicyGrantsSetReply: {
            tenant: string;
            agent_id: string;
            allow: string[];
            deny?: string[];
            pins?: {
                [key: string]: number;
            };
        };
        PolicyGrantsSetBody: {
            allow: string[];
            deny?: string[];
        };
        PolicyToolsReply: {
            tools: {
                name: string;
                version: number;
                description: string;
                parameters: Record<string, never>;
                effect: string;
                risk_level: string;
                executor: "device" | "platform";
            }[];
        };
        PolicyToolsSearchReply: {
            hits: {
                name: string;
                version: number;
                description: string;
                score: number;
            }[];
        };
        PolicyRiskAppsGetReply: {
            tenant: string;
            finance: string[];
            not_finance: string[];
        };
        PolicyRiskAppsSetReply: {
            tenant: string;
            finance: string[];
            not_finance: string[];
        };
        PolicyRiskAppsSetBody: {
            finance: string[];
            not_finance: string[];
        };
        PolicySettingsGetReply: {
            tenant: string;
            /** @enum {unknown} */
            taint_rule: "matching" | "every_write";
        };
        PolicySettingsSetReply: {
            tenant: string;
            /** @enum {unknown} */
            taint_rule: "matching" | "every_write";
        };
        PolicySettingsSetBody: {
            /** @enum {unknown} */
            taint_rule: "matching" | "every_write";
        };
        DeviceBridgeDevicesReply: {
            devices: {
                device_id: string;
                boot_id: string;
                session_id: string;
                connected_at: string;
                replica: string;
            }[];
        };
        DeviceBridgeCredentialsListReply: {
            credentials: {
                credential_id: string;
                tenant: string;
                device_id: string;
                created_at: string;
                expires_at: string | null;
                revoked_at: string | null;
                /** @enum {unknown} */
                state: "active" | "expired" | "revoked";
            }[];
        };
        DeviceBridgeCredentialsIssueReply: {
            credential: {
                credential_id: string;
                tenant: string;
                device_id: string;
                created_at: string;
                expires_at: string | null;
                revoked_at: string | null;
                /** @enum {unknown} */
                state: "active" | "expired" | "revoked";
            };
            token: string;
        };
        DeviceBridgeCredentialsIssueBody: {
            ttl_seconds?: number;
        };
        DeviceBridgeCredentialsRotateReply: {
            credential: {
                credential_id: string;
                tenant: string;
                device_id: string;
                created_at: string;
                expires_at: string | null;
                revoked_at: string | null;
                /** @enum {unknown} */
                state: "active" | "expired" | "revoked";
            };
            token: string;
        };
        DeviceBridgeCredentialsRotateBody: {
            ttl_seconds?: number;
            grace_seconds?: number;
        };
        DeviceBridgeCredentialsRevokeReply: {
            revoked: string[];
        };
        DeviceBridgeCredentialsRevokeBody: {
            credential_id?: string;
        };
        PolicyKeysListReply: {
            keys: {
                key_id: string;
                tenant: string;
                agent_id: string;
                label: string | null;
                /** @enum {unknown} */
                via: "issue" | "rotate";
                created_at: string;
                rotated_at: string | null;
                replaced_by: string | null;
                expires_at: string | null;
                revoked_at: string | null;
                /** @enum {unknown} */
                state: "active" | "expired" | "revoked";
            }[];
        };
        PolicyKeysIssueReply: {
            key: {
                key_id: string;
                tenant: string;
                agent_id: string;
                label: string | null;
                /** @enum {unknown} */
                via: "issue" | "rotate";
                created_at: string;
                rotated_at: string | null;
                replaced_by: string | null;
                expires_at: string | null;
                revoked_at: string | null;
                /** @enum {unknown} */
                state: "active" | "expired" | "revoked";
            };
            api_key: string;
        };
        PolicyKeysIssueBody: {
            label?: string;
        };
        PolicyKeysRotateReply: {
            key: {
                key_id: string;
                tenant: string;
                agent_id: string;
                label: string | null;
                /** @enum {unknown} */
                via: "issue" | "rotate";
                created_at: string;
                rotated_at: string | null;
                replaced_by: string | null;
                expires_at: string | null;
                revoked_at: string | null;
                /** @enum {unknown} */
                state: "active" | "expired" | "revoked";
            };
            api_key: string;
        };
        PolicyKeysRotateBody: {
            label?: string;
            grace_seconds?: number;
        };
        PolicyKeysRevokeReply: {
            revoked: string[];
        };
        PolicyKeysRevokeBody: {
            key_id?: string;
        };
        AuditCallReply: {
            tenant: string;
            call_id: string;
            tool: string;
            contract_version: string;
            agent_id: string;
            correlation_id: string;
            origin: {
                /** @constant */
                kind: "conversation";
                conversation_id: string;
                turn: number;
                index: number;
            } | {
                /** @constant */
                kind: "operation";
                operation_id: string;
            };
            target_device_id: string | null;
            payload: string | null;
            payload_sha256: string;
            status: string;
            decision: ("refused" | "staged" | "authorized") | null;
            decided_at: string | null;
            refusal_code: string | null;
            refusal_message: string | null;
            risk_level: ("low" | "high") | null;
            risk_reasons: string[] | null;
            approval_id: string | null;
            approval_summary: string | null;
            approval_expires_at: string | null;
            approval_outcome: ("approved" | "denied" | "expired") | null;
            decided_by: string | null;
            approval_decided_at: string | null;
            denial_reason: string | null;
            authorized_at: string | null;
            request_id: string | null;
            executor: ({
                /** @constant */
                kind: "device";
                device_id: string;
            } | {
                /** @constant */
                kind: "platform";
                service: string;
            }) | null;
            deadline: string | null;
            dispatched_at: string | null;
            executor_id: string | null;
            boot_id: string | null;
            started_at: string | null;
            result: unknown;
            error: {
                code: string;
                message: string;
            } | null;
            unknown_cause: ("timeout" | "connection_lost" | "reboot" | "status_missing") | null;
            unknown_detail: string | null;
            unknown_at: string | null;
            sealed_by: string | null;
            seal_reason: string | null;
            sealed_at: string | null;
            requested_at: string;
            finished_at: string | null;
            updated_at: string;
            last_seq: number;
            payload_erased_at: string | null;
            result_erased_at: string | null;
        };
        AuditEventsReply: {
            events: {
                stream: string;
                seq: number;
                event: {
                    /** @constant */
                    specversion: "1.0";
                    id: string;
                    source: string;
                    type: string;
                    subject: string;
                    /** Format: date-time */
                    time: string;
                    /** @constant */
                    datacontenttype: "application/json";
                    tenant: string;
                    correlationid: string;
                    causationid: string;
                    schemaversion: number;
                    data: unknown;
                };
            }[];
            partial: boolean;
            next_from_seq: number | null;
        };
        ModelLoopStartReply: {
            conversation_id: string;
            /** @enum {unknown} */
            status: "running" | "paused" | "completed";
        };
        ModelLoopStartBody: {
            agent_id: string;
            task: string;
            device_id: string | null;
            model?: string;
            model_settings?: {
                base_url?: string;
                api_key_env?: string;
                api_key_file?: string;
                max_output_tokens?: number;
                stream?: boolean;
            };
            conversation_id?: string;
            pinned_tools?: string[];
        };
        ModelLoopGetReply: {
            conversation_id: string;
            /** @enum {unknown} */
            status: "running" | "paused" | "completed";
            model: string;
            messages: ({
                /** @enum {unknown} */
                role: "user" | "system";
                content: string;
                turn: number;
            } | {
                /** @constant */
                role: "assistant";
                content: string;
                tool_calls?: {
                    index: number;
                    name: string;
                    arguments: Record<string, never>;
                    call_id: string;
                }[];
                turn: number;
            } | {
                /** @constant */
                role: "tool";
                content: string;
                tool_call_id: string;
                provenance: {
                    source: string;
                    call_id: string;
                    tool: string;
                    /** @enum {unknown} */
                    status: "pending_confirmation" | "refused" | "rejected" | "succeeded" | "failed" | "outcome_unknown" | "denied" | "expired" | "sealed";
                    truncated: boolean;
                    approval: {
                        approval_id: string;
                        summary: string;
                    } | null;
                };
                turn: number;
            })[];
            pending: {
                call_id: string;
                approval_id: string;
                summary: string;
            }[];
            final_text: string | null;
            completion_reason: ("answered" | "step_limit" | "tool_limit" | "time_limit" | "token_limit" | "cost_limit" | "failed" | "tenant_day_steps" | "tenant_day_tool_calls" | "tenant_day_tokens" | "tenant_day_cost") | null;
            bound: {
                /** @enum {unknown} */
                bound: "steps" | "tool_calls" | "tokens" | "wall_time" | "cost" | "tenant_day_steps" | "tenant_day_tool_calls" | "tenant_day_tokens" | "tenant_day_cost";
                limit: number;
                used: number;
            } | null;
            usage: {
                steps: number;
                tool_calls: number;
                tokens: number;
                cost_usd: number | null;
            };
        };
        ModelLoopAgentsGetReply: {
            tenant: string;
            agent_id: string;
            model: string;
            settings: {
                base_url?: string;
                api_key_env?: string;
                api_key_file?: string;
                max_output_tokens?: number;
                stream?: boolean;
            };
            updated_by: string;
            updated_at: string;
        };
        ModelLoopAgentsSetReply: {
            tenant: string;
            agent_id: string;
            model: string;
            settings: {
                base_url?: string;
                api_key_env?: string;
                api_key_file?: string;
                max_output_tokens?: number;
                stream?: boolean;
            };
            updated_by: string;
            updated_at: string;
        };
        ModelLoopAgentsSetBody: {
            model: string;
            settings?: {
                base_url?: string;
                api_key_env?: string;
                api_key_file?: string;
                max_output_tokens?: number;
                stream?: boolean;
            };
        };
        ModelLoopAgentsListReply: {
            agents: {
                tenant: string;
                agent_id: string;
                model: string;
                settings: {
                    base_url?: string;
                    api_key_env?: string;
                    api_key_file?: string;
                    max_output_tokens?: number;
                    stream?: boolean;
                };
                updated_by: string;
                updated_at: string;
            }[];
        };
        ApprovalsListReply: {
            approvals: {
                approval_id: string;
                call_id: string;
                tenant: string;
                tool: string;
                agent_id: string | null;
                device_id: string | null;
                summary: string;
                arguments: unknown | null;
                risk_reasons: string[];
                staged_at: string;
                payload_sha256: string;
                contract_version: string;
                status: string;
                expires_at: string;
                decided_by: string | null;
                decided_at: string | null;
            }[];
        };
        ApprovalsApproveReply: {
            approval_id: string;
            call_id: string;
            tenant: string;
            tool: string;
            agent_id: string | null;
            device_id: string | null;
            summary: string;
            arguments: unknown | null;
            risk_reasons: string[];
            staged_at: string;
            payload_sha256: string;
            contract_version: string;
            status: string;
            expires_at: string;
            decided_by: string | null;
            decided_at: string | null;
        };
        ApprovalsApproveBody: {
            reason?: string;
        };
        ApprovalsDenyReply: {
            approval_id: string;
            call_id: string;
            tenant: string;
            tool: string;
            agent_id: string | null;
            device_id: string | null;
            summary: string;
            arguments: unknown | null;
            risk_reasons: string[];
            staged_at: string;
            payload_sha256: string;
            contract_version: string;
            status: string;
            expires_at: string;
            decided_by: string | null;
            decided_at: string | null;
        };
        ApprovalsDenyBody: {
            reason?: string;
        };
        ApprovalsWebhooksListReply: {
            webhooks: {
                webhook_id: string;
                tenant: string;
                url: string;
                events: ("staged" | "decided" | "expired")[];
                enabled: boolean;
                description: string | null;
                created_at: string;
                updated_at: string;
                secret_issued_at: string;
            }[];
        };
        ApprovalsWebhooksSetReply: {
            webhook: {
                webhook_id: string;
                tenant: string;
                url: string;
                events: ("staged" | "decided" | "expired")[];
                enabled: boolean;
                description: string | null;
                created_at: string;
                updated_at: string;
                secret_issued_at: string;
            };
            secret: string | null;
        };
        ApprovalsWebhooksSetBody: {
            webhook_id?: string;
            url?: string;
            events?: ("staged" | "decided" | "expired")[];
            enabled?: boolean;
            description?: string;
            rotate_secret?: boolean;
        };
        ApprovalsWebhooksRemoveReply: {
            webhook_id: string;
            removed_at: string;
        };
        ApprovalsWebhooksDeliveriesReply: {
            deliveries: {
                delivery_id: string;
                webhook_id: string;
                tenant: string;
                event_id: string;
                /** @enum {unknown} */
                event: "staged" | "decided" | "expired";
                approval_id: string;
                call_id: string;
                /** @enum {unknown} */
                status: "pending" | "delivered" | "failed";
                attempts: number;
                next_attempt_at: string | null;
                last_status_code: number | null;
                last_error: string | null;
                created_at: string;
                delivered_at: string | null;
                body: string;
                attempt_log: {
                    attempt: number;
                    started_at: string;
                    finished_at: string | null;
                    status_code: number | null;
                    error: string | null;
                }[];
            }[];
        };
        TenantEventsMessage: {
            /** @enum {unknown} */
            context: "calls" | "conversations" | "devices" | "usage";
            seq: number;
            events: {
                /** @constant */
                specversion: "1.0";
                id: string;
                source: string;
                type: string;
                subject: string;
                /** Format: date-time */
                time: string;
                /** @constant */
                datacontenttype: "application/json";
                tenant: string;
                correlationid: string;
                causationid: string;
                schemaversion: number;
                data: unknown;
            }[];
            error?: string;
        };
    };
    responses: {
        /** @description The request is malformed: not JSON, an identifier that cannot be one, or a request its schema refuses. */
        Error400: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ApiError"];
            };
        };
        /** @description No credential, or one that does not verify. */
        Error401: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ApiError"];
            };
        };
        /** @description The credential's tenant or roles do not allow this. */
        Error403: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ApiError"];
            };
        };
        /** @description No such thing in this tenant (`*_not_found`), or no such route. */
        Error404: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ApiError"];
            };
        };
        /** @description It conflicts with what is recorded (the code says what). */
        Error409: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ApiError"];
            };
        };
        /** @description The body is larger than 512 KiB. */
        Error413: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ApiError"];
            };
        };
        /** @description The body is not JSON. */
        Error415: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ApiError"];
            };
        };
        /** @description The service that owns this did not answer; the message says whether anything may have happened. */
        Error503: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ApiError"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    policySubmit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PolicySubmitBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicySubmitReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    policyStatus: {
        parameters: {
            query?: {
                timeline?: boolean;
                as_of?: string;
            };
            header?: never;
            path: {
                tenant: string;
                call_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyStatusReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    policySeal: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                call_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PolicySealBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicySealReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    policyGrantsGet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyGrantsGetReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    policyGrantsSet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PolicyGrantsSetBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyGrantsSetReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    policyTools: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyToolsReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    policyToolsSearch: {
        parameters: {
            query: {
                query: string;
                limit?: number;
            };
            header?: never;
            path: {
                tenant: string;
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyToolsSearchReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    policyRiskAppsGet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyRiskAppsGetReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    policyRiskAppsSet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PolicyRiskAppsSetBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyRiskAppsSetReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    policySettingsGet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicySettingsGetReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    policySettingsSet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PolicySettingsSetBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicySettingsSetReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    deviceBridgeDevices: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceBridgeDevicesReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    deviceBridgeCredentialsList: {
        parameters: {
            query?: {
                device_id?: string;
            };
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceBridgeCredentialsListReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    deviceBridgeCredentialsIssue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                device_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["DeviceBridgeCredentialsIssueBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceBridgeCredentialsIssueReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    deviceBridgeCredentialsRotate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                device_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["DeviceBridgeCredentialsRotateBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceBridgeCredentialsRotateReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    deviceBridgeCredentialsRevoke: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                device_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["DeviceBridgeCredentialsRevokeBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceBridgeCredentialsRevokeReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    policyKeysList: {
        parameters: {
            query?: {
                agent_id?: string;
            };
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyKeysListReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    policyKeysIssue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["PolicyKeysIssueBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyKeysIssueReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    policyKeysRotate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["PolicyKeysRotateBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyKeysRotateReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    policyKeysRevoke: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["PolicyKeysRevokeBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyKeysRevokeReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    auditCall: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                call_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditCallReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    auditEvents: {
        parameters: {
            query?: {
                context?: "calls" | "conversations" | "devices" | "usage";
                call_id?: string;
                from_seq?: number;
                limit?: number;
            };
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditEventsReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    modelLoopStart: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ModelLoopStartBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelLoopStartReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    modelLoopGet: {
        parameters: {
            query?: {
                as_of?: string;
            };
            header?: never;
            path: {
                tenant: string;
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelLoopGetReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    modelLoopAgentsGet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelLoopAgentsGetReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    modelLoopAgentsSet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ModelLoopAgentsSetBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelLoopAgentsSetReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    modelLoopAgentsList: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelLoopAgentsListReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    approvalsList: {
        parameters: {
            query?: {
                status?: "pending" | "all";
            };
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalsListReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    approvalsApprove: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                approval_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ApprovalsApproveBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalsApproveReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    approvalsDeny: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                approval_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ApprovalsDenyBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalsDenyReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    approvalsWebhooksList: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalsWebhooksListReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    approvalsWebhooksSet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ApprovalsWebhooksSetBody"];
            };
        };
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalsWebhooksSetReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            503: components["responses"]["Error503"];
        };
    };
    approvalsWebhooksRemove: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: string;
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalsWebhooksRemoveReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    approvalsWebhooksDeliveries: {
        parameters: {
            query?: {
                webhook_id?: string;
                status?: "pending" | "delivered" | "failed";
                approval_id?: string;
                limit?: number;
            };
            header?: never;
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovalsWebhooksDeliveriesReply"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    tenantEvents: {
        parameters: {
            query?: {
                context?: "calls" | "conversations" | "devices" | "usage";
                from?: string;
            };
            header?: {
                /** @description Resume after this event: the `id` of the last event received (browsers send it on reconnecting). */
                "Last-Event-ID"?: string;
            };
            path: {
                tenant: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event stream, until the client disconnects. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            503: components["responses"]["Error503"];
        };
    };
    openApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1 document. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
        };
    };
}
