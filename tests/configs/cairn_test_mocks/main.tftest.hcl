# Mocks and overrides, run by cairn test and by terraform test 1.11.4 with
# the same results (tests/tests/all/cairn_test_mocks.rs).

mock_provider "terraform" {
  mock_resource "terraform_data" {
    defaults = {
      id = "mocked"
    }
  }
  override_resource {
    target = terraform_data.b[1]
    values = {
      id = "b-one"
    }
  }
}

override_resource {
  target          = terraform_data.a
  override_during = plan
  values = {
    id     = "a-id"
    output = "from-file"
  }
}

variables {
  name = "alpha"
}

run "plan_has_what_override_during_plan_gives" {
  command = plan
  assert {
    condition     = output.out == "from-file" && terraform_data.a.input == "alpha"
    error_message = "out is ${output.out}"
  }
}

run "apply_gives_defaults_and_overrides" {
  override_resource {
    target = terraform_data.b[0]
    values = {
      id = "b-zero"
    }
  }
  assert {
    condition     = terraform_data.b[0].id == "b-zero" && terraform_data.b[1].id == "b-one"
    error_message = "ids are ${terraform_data.b[0].id} and ${terraform_data.b[1].id}"
  }
  assert {
    condition     = output.id == "a-id" && output.out == "from-file"
    error_message = "id is ${output.id}"
  }
}

run "an_update_keeps_what_the_create_gave" {
  variables {
    name = "beta"
  }
  assert {
    condition     = terraform_data.b[0].id == "b-zero" && terraform_data.a.input == "beta"
    error_message = "b[0] is ${terraform_data.b[0].id}"
  }
}

run "a_failing_assertion" {
  assert {
    condition     = output.out == "something else"
    error_message = "out is ${output.out}"
  }
}
