# The file's variables go to every run; a module that does not declare
# one ignores it.
variables {
  prefix = "file"
}

# Applies the setup module, in a state of its own.
run "setup" {
  module {
    source = "./testing/setup"
  }
  assert {
    condition     = output.name == "file-setup"
    error_message = "setup output ${output.name}"
  }
}

# The configuration under test, with the setup's output; the nested
# module call module.m.module.n is overridden.
run "main" {
  variables {
    name = run.setup.name
  }
  override_module {
    target = module.m.module.n
    outputs = {
      v = "over"
    }
  }
  assert {
    condition     = output.out == "file-setup"
    error_message = "main output ${output.out}"
  }
  assert {
    condition     = output.deep == "over"
    error_message = "deep ${output.deep}"
  }
}

# The setup module again: the same state (keyed by the module's source),
# so nothing changes and the id is known in the plan.
run "setup_shared" {
  command = plan
  module {
    source = "./testing/setup"
  }
  assert {
    condition     = terraform_data.s.id == run.setup.id
    error_message = "the setup state is not shared"
  }
}

# The setup module with a state_key of its own: a fresh object.
run "setup_keyed" {
  state_key = "fresh"
  module {
    source = "./testing/setup"
  }
  assert {
    condition     = terraform_data.s.id != run.setup.id
    error_message = "the keyed state is the setup's"
  }
}

# The configuration under test again: its own state, not the setup's.
run "main_again" {
  command = plan
  variables {
    name = "file-setup"
  }
  assert {
    condition     = terraform_data.a.id == run.main.id
    error_message = "the main state is not kept"
  }
}

# Fails on purpose: the keyed state holds the object of setup_keyed.
run "keyed_again" {
  command   = plan
  state_key = "fresh"
  module {
    source = "./testing/setup"
  }
  assert {
    condition     = terraform_data.s.id == run.setup.id
    error_message = "keyed ${terraform_data.s.id} is not the setup's"
  }
}
