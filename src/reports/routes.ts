import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { action, withWarnings } from "../http/envelope.ts";
import { FiscalizationReport } from "./schema.ts";
import type { ReportService } from "./service.ts";

export function reportRoutes(deps: { reports: ReportService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/api/v1/einvoice/report-fiscalization",
      {
        schema: { body: FiscalizationReport },
        config: { handler: "invoice.report_fiscalization", failureMessage: "Failed to submit report" },
      },
      async (request) => {
        const { warnings } = await deps.reports.submit(request.principal, request.body);
        return withWarnings(action("Report submitted successfully", []), warnings);
      },
    );
  };
}
