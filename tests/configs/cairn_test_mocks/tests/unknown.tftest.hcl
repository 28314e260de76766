mock_provider "terraform" {
  mock_resource "terraform_data" {
    defaults = {
      id = "mocked"
    }
  }
}

variables {
  name = "gamma"
}

run "computed_values_are_unknown_in_a_plan" {
  command = plan
  assert {
    condition     = terraform_data.b[0].id == "mocked"
    error_message = "known in the plan"
  }
}
