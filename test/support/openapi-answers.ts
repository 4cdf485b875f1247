// The OpenAPI document's answer schemas as ajv validators (JSON Schema
// 2020-12, OpenAPI 3.1's dialect), for the unit test (every schema compiles,
// every $ref resolves) and the integration test (real answers fit them).
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";

const DOCUMENT_ID = "pb-fleet-openapi.json";
const pointerPart = (part: string) => part.replace(/~/g, "~0").replace(/\//g, "~1");

export interface AnswerSchemas {
  /** The validator of one route's answer body for a status; throws when the document has none. */
  validator(method: string, path: string, status: number, contentType?: string): ValidateFunction;
  /** Every (route, status, content type) the document gives an answer schema for. */
  answers(): { method: string; path: string; status: number; contentType: string }[];
  errorsText(validate: ValidateFunction): string;
}

export function answerSchemas(document: { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> }): AnswerSchemas {
  // strict: false: the document's own members (openapi, info, paths...) are not JSON Schema keywords.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(document, DOCUMENT_ID);
  return {
    validator(method, path, status, contentType = "application/json") {
      const pointer = ["paths", path, method.toLowerCase(), "responses", String(status), "content", contentType, "schema"].map(pointerPart).join("/");
      const op = document.paths[path]?.[method.toLowerCase()];
      if (op?.responses[String(status)]?.content?.[contentType] === undefined) {
        throw new Error(`the document has no ${contentType} answer for ${method} ${path} ${status}`);
      }
      const validate = ajv.getSchema(`${DOCUMENT_ID}#/${pointer}`);
      if (validate === undefined) throw new Error(`ajv found no schema at ${pointer}`);
      return validate;
    },
    answers() {
      const all = [];
      for (const [path, item] of Object.entries(document.paths)) {
        for (const [method, op] of Object.entries(item)) {
          for (const [status, response] of Object.entries(op.responses)) {
            for (const contentType of Object.keys(response.content ?? {})) {
              all.push({ method: method.toUpperCase(), path, status: Number(status), contentType });
            }
          }
        }
      }
      return all;
    },
    errorsText(validate) {
      return ajv.errorsText(validate.errors);
    },
  };
}
