// Package din implements DIN, the protocol between the reasoning model and
// the orchestrator: DIN-Write, the JSON operations the model answers with,
// and DIN-Read, the flat text the orchestrator shows it.
//
// Everything here is pure and deterministic (no I/O, clocks, randomness,
// goroutines, or output that depends on map order), because it runs inside
// Temporal workflow code and must give the same result on replay.
//
// # DIN-Write
//
// The model answers one JSON object {"ops":[...]}; each op has an "op" type
// and that type's fields:
//
//	create    id, description, embed_text, parent?, depends_on?   new PENDING subtask (parent defaults to the focus)
//	update    task, description, embed_text                      revise a PENDING/ACTIVE task
//	depend    task, on                                           add DEPENDS_ON task -> on
//	complete  task, result, embed_text                           DONE with result (again on DONE: revise)
//	fail      task, reason                                       FAILED: immutable dead end
//	continue  task                                               back to PENDING for a later turn
//	evidence  task, content, embed_text, source?                 evidence written by the model
//	call      task, tool, args                                   tool call (web_search {"query"}), run after the write
//
// Extract finds the object in the raw answer, Parse decodes it strictly and
// Validate checks it against the session's task ids; every problem is
// returned so that RepairPrompt can list them all in one repair call.
// SystemPrompt teaches the format and Schema gives it as a JSON Schema for
// servers that constrain decoding.
//
// # DIN-Read
//
// Render writes one item per line; texts are flattened to one line each, so
// no text can start a line of its own. In order:
//
//	=GOAL <goal>                                          when the root is the focus, else
//	YOUR TASK: [<id>] <description> (Parent goal for context: <goal>)
//	T <id> <STATUS> <description> => <result>             tasks; DONE shows a truncated result,
//	T <id> FAILED <description> (dead end: <reason>)      FAILED its reason
//	>SUB <child> <parent>                                 SUBTASK_OF edges of the focus and listed tasks
//	>DEP <task> <on>                                      DEPENDS_ON edges
//	E <ref> [<task>] <content> (source: <url> "<title>")  evidence
//	! <text>                                              warn lines and user notes
//	TOOLS: web_search(query)
//
// Task lines and evidence lines are each placed in U-shaped zones: given in
// relevance order, rank one goes first, rank two last, rank three second,
// and so on, so the weakest items sit in the middle where models attend
// least.
//
// DIN-Read carries no numbers of its own: no scores, budgets, distances,
// percentages or iteration counts. The orchestrator steers with those; the
// model reasons about content. Counts the model should know about become
// words (see Warnings and CoverageTag). The only digits in a rendered view
// come from user and web texts and from ids.
package din
