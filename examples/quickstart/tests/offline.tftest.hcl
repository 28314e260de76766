# Tests the quickstart without writing a file or drawing a random number:
# the local and random providers are mocked (never configured or called),
# and the one terraform_data object is overridden (the terraform provider is
# real).
#
#   cairn test examples/quickstart

mock_provider "local" {}

mock_provider "random" {
  mock_resource "random_id" {
    defaults = {
      hex = "c0ffee00"
    }
  }
}

override_resource {
  target = terraform_data.summary
  values = {
    output = {
      run_id = "from-the-override"
    }
  }
}

run "the_file_says_the_greeting_and_the_run_id" {
  assert {
    condition     = local_file.hello.content == "Hello from cairn!\nThis file was written by a sandboxed WebAssembly provider.\nRun id: c0ffee00\n"
    error_message = "the file would say: ${local_file.hello.content}"
  }
  assert {
    condition     = output.run_id == "c0ffee00" && output.file == "out/hello.txt"
    error_message = "outputs: ${output.run_id}, ${output.file}"
  }
  assert {
    condition     = output.summary.run_id == "from-the-override"
    error_message = "the summary is not the override's"
  }
  assert {
    condition     = length(nonsensitive(random_password.secret.result)) == 8
    error_message = "a mocked password is 8 generated characters"
  }
}

run "another_greeting" {
  command = plan
  variables {
    greeting = "Hi"
  }
  assert {
    condition     = startswith(local_file.hello.content, "Hi!\n")
    error_message = "the greeting is not the file's first line"
  }
}
