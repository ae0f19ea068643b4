// The tenant's collection_schedule setting (docs/guard-server.md, "Scheduled collection"):
//   GET /v1/tenant/collection-schedule   admins and members their tenant's; support staff any tenant's (?tenant_id=)
//   PUT /v1/tenant/collection-schedule   admins replace it (a part left out is removed); audited
// {weekly?: {enabled, weekday, hour (UTC)}, on_critical_signal?: {enabled, min_interval_hours}},
// answered with when the weekly run fires next. The schedule only makes bundle requests: who
// may read the bundles stays allow_support_collection in the tenant's settings.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { requireTenantUser, requireUser } from '../auth/index.ts';
import type { CollectionScheduleTable, Db } from '../db/index.ts';
import { badRequest, notFound } from '../kernel/errors.ts';
import { ErrorResponses } from '../kernel/route-schemas.ts';
import {
  type CollectionSchedule,
  CollectionSchedulesRepository,
  DEFAULT_MIN_INTERVAL_HOURS,
  scheduleOf,
} from './collection-schedule-repository.ts';
import { nextRun, WEEKDAYS, type Weekday } from './slots.ts';

const Weekly = Type.Object(
  {
    enabled: Type.Boolean(),
    weekday: Type.Union(
      WEEKDAYS.map((d) => Type.Literal(d)),
      { description: 'monday … sunday' },
    ),
    hour: Type.Integer({ minimum: 0, maximum: 23, description: 'the hour the run starts, UTC (0–23)' }),
  },
  {
    additionalProperties: false,
    description: 'once a week, at this weekday and hour (UTC): one bundle request per online, non-revoked server',
  },
);

const CRITICAL_PART = 'when a server raises a critical signal (severity 5): a bundle request of that server';

const Critical = Type.Object(
  {
    enabled: Type.Boolean(),
    min_interval_hours: Type.Integer({
      minimum: 1,
      maximum: 720,
      description: `at most one bundle per server per this many hours from this trigger (default ${DEFAULT_MIN_INTERVAL_HOURS})`,
    }),
  },
  { additionalProperties: false, description: CRITICAL_PART },
);

const CriticalChange = Type.Object(
  { enabled: Type.Boolean(), min_interval_hours: Type.Optional(Critical.properties.min_interval_hours) },
  { additionalProperties: false, description: CRITICAL_PART },
);

const Schedule = Type.Object(
  { weekly: Type.Optional(Weekly), on_critical_signal: Type.Optional(Critical) },
  { additionalProperties: false },
);

const ScheduleChange = Type.Object(
  { weekly: Type.Optional(Weekly), on_critical_signal: Type.Optional(CriticalChange) },
  { additionalProperties: false, description: 'the whole setting: a part left out is removed' },
);

const ScheduleView = Type.Object({
  collection_schedule: Schedule,
  next_weekly_run_at: Type.Union([Type.String(), Type.Null()], {
    description: 'when the weekly run fires next (at the next maintenance pass after it, --gc-interval); null: off',
  }),
});

const ScheduleQuery = Type.Object({
  tenant_id: Type.Optional(Type.String({ maxLength: 64, description: 'support staff only: the tenant to read' })),
});

/** What the setting's routes need of the server. */
export interface CollectionScheduleDeps {
  db: Db;
  now: () => Date;
}

export const collectionScheduleRoutes: FastifyPluginAsyncTypebox<CollectionScheduleDeps> = async (app, deps) => {
  const schedules = new CollectionSchedulesRepository(deps.db);
  const view = (row: CollectionScheduleTable | undefined): Static<typeof ScheduleView> => {
    const schedule = scheduleOf(row);
    const weekly = schedule.weekly;
    return {
      collection_schedule: schedule as Static<typeof Schedule>,
      next_weekly_run_at:
        weekly?.enabled && row
          ? nextRun(deps.now(), weekly.weekday, weekly.hour, row.weekly_last_slot).toISOString()
          : null,
    };
  };

  app.get(
    '/v1/tenant/collection-schedule',
    {
      config: { scope: 'settings' },
      schema: {
        tags: ['tenant'],
        summary:
          "The tenant's collection schedule: bundles requested weekly and on critical signals (admins and members their own; support staff name the tenant)",
        querystring: ScheduleQuery,
        response: { 200: ScheduleView, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member', 'support']);
      const tenantId = user.role === 'support' ? req.query.tenant_id : user.tenantId;
      if (!tenantId) throw badRequest('support staff name the tenant: ?tenant_id=');
      const tenant = await deps.db.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst();
      if (!tenant) throw notFound('tenant');
      return view(await schedules.row(tenantId));
    },
  );

  app.put(
    '/v1/tenant/collection-schedule',
    {
      config: { scope: 'settings' },
      schema: {
        tags: ['tenant'],
        summary:
          "Replace the tenant's collection schedule (admin; audited). It only makes bundle requests: who may read the bundles stays allow_support_collection",
        body: ScheduleChange,
        response: { 200: ScheduleView, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      const schedule: CollectionSchedule = {};
      if (req.body.weekly)
        schedule.weekly = {
          enabled: req.body.weekly.enabled,
          weekday: req.body.weekly.weekday as Weekday,
          hour: req.body.weekly.hour,
        };
      if (req.body.on_critical_signal)
        schedule.on_critical_signal = {
          enabled: req.body.on_critical_signal.enabled,
          min_interval_hours: req.body.on_critical_signal.min_interval_hours ?? DEFAULT_MIN_INTERVAL_HOURS,
        };
      const row = await schedules.put(user.tenantId, schedule, { actor: user, at: deps.now() });
      req.log.info({ tenantId: user.tenantId, ...schedule }, 'collection schedule changed');
      return view(row);
    },
  );
};
