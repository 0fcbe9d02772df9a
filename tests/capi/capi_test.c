/* The C API (include/corral/corral.h) from C: a policy from TOML and from
 * JSON, a set, runs with captured output, the typed errors, a prepared
 * process over pipes, and the set's close. Judged from outside: a file the
 * read-only run could not write is absent. Usage: capi_test WORKSPACE SCRATCH
 * (two empty directories of the caller's). Exits 0 when every check held. */
#include <corral/corral.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: capi_test WORKSPACE SCRATCH\n");
    return 2;
  }
  const char *workspace = argv[1], *scratch = argv[2];
  char *error = NULL;
  corral_policy *policy = NULL;
  corral_set *set = NULL;
  corral_executor *executor = NULL;
  corral_run_result run;

  /* A bad policy is one typed error and nothing else. */
  CHECK(corral_policy_from_json("{\"sandbox\": {\"mode\": 3}}", workspace, &policy, &error) == CORRAL_OK);
  CHECK(corral_set_create(policy, scratch, 4, &set, &error) == CORRAL_E_POLICY);
  CHECK(error != NULL && strlen(error) > 0);
  corral_string_free(error);
  error = NULL;
  corral_policy_free(policy);
  CHECK(corral_policy_from_json("[1, 2]", workspace, &policy, &error) == CORRAL_E_POLICY);
  corral_string_free(error);
  error = NULL;
  CHECK(strcmp(corral_errc_name(CORRAL_E_REFUSED_BY_GATE), "refused_by_gate") == 0);

  /* Workspace-write from TOML: a run, its output and exit code. */
  CHECK(corral_policy_from_toml("[sandbox]\nmode = \"workspace-write\"\n", workspace, &policy, &error) == CORRAL_OK);
  CHECK(corral_set_create(policy, scratch, 4, &set, &error) == CORRAL_OK);
  CHECK(corral_set_executor(set, "c", &executor, &error) == CORRAL_OK);
  if (failures != 0) {
    fprintf(stderr, "%s\n", error != NULL ? error : "");
    return 1;
  }
  CHECK(corral_executor_level(executor) == 0);
  char *report = corral_executor_report(executor);
  CHECK(report != NULL && strstr(report, "\"plan\"") != NULL);
  corral_string_free(report);
  CHECK(corral_run_command(executor, "", "echo hello; echo oops >&2; exit 4", 0, &run, &error) == CORRAL_OK);
  CHECK(run.exit_code == 4);
  CHECK(run.stdout_len == 6 && strcmp(run.stdout_data, "hello\n") == 0);
  CHECK(strcmp(run.stderr_data, "oops\n") == 0);
  CHECK(run.protected_left == NULL && run.protected_left_count == 0); /* nothing left at a protected path */
  corral_run_result_free(&run);
  const char *touch[] = {"touch", "made-by-c", NULL};
  CHECK(corral_run_argv(executor, NULL, touch, 0, &run, &error) == CORRAL_OK);
  corral_run_result_free(&run);
  char made[4096];
  snprintf(made, sizeof made, "%s/made-by-c", workspace);
  CHECK(exists(made));
  const char *yes[] = {"yes", NULL};
  CHECK(corral_run_argv(executor, NULL, yes, 1000, &run, &error) == CORRAL_OK);
  CHECK(run.output_limit == 1 && run.stdout_len == 1000);
  corral_run_result_free(&run);
  CHECK(corral_run_command(executor, "/", "true", 0, &run, &error) == CORRAL_E_CWD_OUTSIDE_WORKSPACE);
  corral_string_free(error);
  error = NULL;

  /* A prepared process over pipes. */
  const char *tr[] = {"tr", "a-z", "A-Z", NULL};
  corral_process_options options;
  memset(&options, 0, sizeof options);
  options.argv = tr;
  corral_process *process = NULL;
  CHECK(corral_process_prepare(executor, &options, &process, &error) == CORRAL_OK);
  int fd = -1;
  CHECK(corral_process_stdin(process, &fd, &error) == CORRAL_E_NOT_STARTED);
  corral_string_free(error);
  error = NULL;
  CHECK(corral_process_start(process, &error) == CORRAL_OK);
  CHECK(corral_process_start(process, &error) == CORRAL_E_ALREADY_STARTED);
  corral_string_free(error);
  error = NULL;
  CHECK(corral_process_stdin(process, &fd, &error) == CORRAL_OK);
  CHECK(write(fd, "shout\n", 6) == 6);
  CHECK(corral_process_close_stdin(process, &error) == CORRAL_OK);
  CHECK(corral_process_stdout(process, &fd, &error) == CORRAL_OK);
  char buffer[64] = {0};
  size_t got = 0;
  ssize_t n;
  while (got < sizeof buffer - 1 && (n = read(fd, buffer + got, sizeof buffer - 1 - got)) > 0) got += (size_t)n;
  CHECK(strcmp(buffer, "SHOUT\n") == 0);
  int code = -1, sig = -1, ended = -1;
  CHECK(corral_process_wait(process, &code, &sig, &ended, &error) == CORRAL_OK);
  CHECK(code == 0 && sig == 0 && ended == CORRAL_ENDED_BY_COMMAND);
  size_t left = 1;
  CHECK(corral_process_protected_left(process, &left) == NULL && left == 0);
  corral_process_free(process);
  corral_set_free(set);
  corral_policy_free(policy);

  /* Read-only from JSON: the write is refused, seen from outside. */
  CHECK(corral_policy_from_json("{\"sandbox\": {\"mode\": \"read-only\"}}", workspace, &policy, &error) == CORRAL_OK);
  CHECK(corral_set_create(policy, scratch, 4, &set, &error) == CORRAL_OK);
  CHECK(corral_set_executor(set, "ro", &executor, &error) == CORRAL_OK);
  const char *forbidden[] = {"touch", "refused", NULL};
  CHECK(corral_run_argv(executor, NULL, forbidden, 0, &run, &error) == CORRAL_OK);
  CHECK(run.exit_code != 0);
  corral_run_result_free(&run);
  char refused[4096];
  snprintf(refused, sizeof refused, "%s/refused", workspace);
  CHECK(!exists(refused));
  corral_set_close(set);
  CHECK(corral_run_argv(executor, NULL, forbidden, 0, &run, &error) == CORRAL_E_SET_CLOSED);
  corral_string_free(error);
  error = NULL;
  CHECK(corral_set_executor(set, "other", &executor, &error) == CORRAL_E_SET_CLOSED);
  corral_string_free(error);
  corral_set_free(set);
  corral_policy_free(policy);
  if (failures == 0) printf("capi_test: every check held\n");
  return failures == 0 ? 0 : 1;
}
