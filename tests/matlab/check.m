function check(cond, varargin)
%CHECK  Fails the running test with the message when cond is false.
if ~all(cond(:))
  error('poolkit_test:failed', varargin{:});
end
end
