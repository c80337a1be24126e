package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/workflows"
)

// TestUIShowsWaitingAndResult loads the Temporal UI's workflow page, as a
// user would, for a finished session (the result: report and stop_reason)
// and for a session whose chat model went away (the current details say it
// waits for the model, for how long, at which attempt). Full-page
// screenshots are logged and, with $LETHE_UI_SCREENSHOTS set, copied there.
func TestUIShowsWaitingAndResult(t *testing.T) {
	needChromium(t)
	browse := uiBrowser(t)
	t.Run("finished", func(t *testing.T) {
		o := runSession(t, "ui-finished", nil)
		first, _, _ := strings.Cut(strings.TrimSpace(o.res.Report), "\n")
		text := showWorkflow(t, browse, "ui-finished", "", "stop_reason", string(o.res.StopReason), jsonFragment(first))
		t.Logf("stop %s; page text %d chars", o.res.StopReason, len(text))
	})
	t.Run("waiting", func(t *testing.T) {
		chatURL := startWaitingSession(t, "ui-waiting")
		// The UI shows current details on the User Metadata tab, rendered
		// from Markdown in an iframe.
		text := showWorkflow(t, browse, "ui-waiting", "User Metadata", "Lethe research session: waiting_for_model",
			"chat model at "+chatURL, "waited", "attempt")
		for _, row := range []string{"waiting for", "waited", "attempt"} {
			if !hasRow(text, row) {
				t.Errorf("the current details have no %q row:\n%s", row, text)
			}
		}
	})
}

// uiBrowser starts headless Chromium for the test and returns a function
// that opens a fresh tab in it.
func uiBrowser(t *testing.T) func() (context.Context, context.CancelFunc) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.Flag("headless", "new"), chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1400, 1000))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil {
		acancel()
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() { bcancel(); acancel() })
	return func() (context.Context, context.CancelFunc) { return chromedp.NewContext(bctx) }
}

// showWorkflow loads the workflow page of id, opens the page's tab named
// tabName (none when ""), waits until its text holds every one of wants
// (the UI renders client-side and polls the server), saves a full-page
// screenshot and returns the page text.
func showWorkflow(t *testing.T, browse func() (context.Context, context.CancelFunc), id, tabName string, wants ...string) string {
	t.Helper()
	tab, cancel := browse()
	defer cancel()
	ctx, cancelT := context.WithTimeout(tab, 90*time.Second)
	defer cancelT()
	u := fmt.Sprintf("%s/namespaces/default/workflows/%s", uiURL, id)
	// A tall viewport: the UI lays out to the window and scrolls inside
	// its own panels, so a full-page screenshot is only as tall as this.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 2000), chromedp.Navigate(u)); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	if tabName != "" {
		if err := chromedp.Do(ctx, chromedp.Click(fmt.Sprintf(`//*[normalize-space(text())=%q]`, tabName))); err != nil {
			saveScreenshot(t, ctx, id)
			t.Fatalf("%s: no %q tab: %v", u, tabName, err)
		}
	}
	text, missing := waitText(ctx, wants)
	saveScreenshot(t, ctx, id)
	if len(missing) > 0 {
		t.Fatalf("%s never showed %q; the page reads:\n%s", u, missing, text)
	}
	return text
}

// pageText is the rendered text of the page and of its same-origin iframes
// (the UI renders Markdown such as current details in one).
const pageText = `(() => {
	let t = document.body ? document.body.innerText : "";
	for (const f of document.querySelectorAll("iframe")) {
		try { t += "\n" + f.contentDocument.body.innerText; } catch (e) {}
	}
	return t;
})()`

// waitText reads the page's rendered text until it holds every want or ctx
// ends; it returns the last text and the wants it lacks.
func waitText(ctx context.Context, wants []string) (string, []string) {
	var text string
	var missing []string
	for {
		text, _ = chromedp.Run(ctx, chromedp.Evaluate[string](pageText))
		missing = missing[:0]
		for _, w := range wants {
			if !strings.Contains(text, w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 {
			return text, nil
		}
		select {
		case <-ctx.Done():
			return text, missing
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// saveScreenshot writes a full-page PNG into the test's temporary directory
// and, when $LETHE_UI_SCREENSHOTS is set, a copy there.
func saveScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	paths := []string{filepath.Join(t.TempDir(), name+".png")}
	if dir := os.Getenv("LETHE_UI_SCREENSHOTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Error(err)
		}
		paths = append(paths, filepath.Join(dir, name+".png"))
	}
	for _, p := range paths {
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Error(err)
			continue
		}
		t.Logf("screenshot: %s", p)
	}
}

// startWaitingSession starts a session whose chat model server goes away
// after the first iteration (the embedding server stays), and returns the
// chat server's URL once visibility says the session waits for its model.
// The session is terminated when the test ends (it would wait for 30 min).
func startWaitingSession(t *testing.T, id string) string {
	t.Helper()
	chat := llmtest.NewServer(slowScript(t))
	t.Cleanup(chat.Close)
	embed := llmtest.NewServer(slowScript(t)) // same script, same vectors
	t.Cleanup(embed.Close)
	dir := t.TempDir()
	extra := map[string]string{"temporal.task_queue": "lethe-" + id, "embed.base_url": embed.URL()}
	params := lethetest.Params(chat.URL(), dir)
	for k, v := range extra {
		params[k] = v
	}
	w := startWorker(t, params)
	c := dial(t)
	cfg := lethetest.Config(t, chat.URL(), dir, extra)
	_, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: extra["temporal.task_queue"]},
		workflows.SessionWorkflow, workflows.SessionInput{Goal: goal, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.TerminateWorkflow(context.Background(), id, "", "the UI test is done with it") })
	waitIteration(t, c, id, 1)
	chat.Close() // connection refused from now on
	if err := waitStatus(c, id, "waiting_for_model", time.Minute); err != nil {
		w.dumpLog(t)
		t.Fatal(err)
	}
	return chat.URL()
}

// waitStatus polls visibility until the workflow's LetheStatus is status.
func waitStatus(c client.Client, id, status string, within time.Duration) error {
	q := fmt.Sprintf(`WorkflowId = %q AND LetheStatus = %q`, id, status)
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		r, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		if err == nil && len(r.GetExecutions()) > 0 {
			return nil
		}
		if d, err := c.DescribeWorkflowExecution(context.Background(), id, ""); err == nil {
			info := d.GetWorkflowExecutionInfo()
			last = fmt.Sprintf("%s, LetheStatus %s", info.GetStatus(), info.GetSearchAttributes().GetIndexedFields()["LetheStatus"].GetData())
			if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				break
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("session %s never listed with LetheStatus=%q; last seen: %s", id, status, last)
}

// hasRow reports whether a Markdown table row labelled label was rendered
// (the UI turns "| label | value |" into a table row: label, tab, value).
func hasRow(text, label string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), label+"\t") {
			return true
		}
	}
	return false
}

// jsonFragment is s as it appears inside a JSON string the UI shows: the
// first 40 bytes, quotes escaped.
func jsonFragment(s string) string {
	s = strings.ReplaceAll(s, `"`, `\"`)
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}
